"""Renderers: Report -> rich renderables | JSON | Markdown. They only present."""
