"""The version, in a leaf module: anything may import it without importing the rest."""

__version__ = "0.1.0"
# Where the project and its pages live (pyproject.toml's [project.urls] say the same).
HOMEPAGE = "https://github.com/gpudoctor/gpudoctor"
DOCS_URL = HOMEPAGE + "/blob/main/docs/"
