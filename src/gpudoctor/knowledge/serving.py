"""Pure: the lines that mark a log as an inference server's, and its lines that show it serving requests.

A server that hangs waits on other things than a training job does (its shard processes, the requests it holds, the KV
cache they fill, NCCL between the shards), so what it is decides the words a hang gets (hang/stage.py, the `serving-*`
cases of `log-said-hang`). Keyed on the servers' own lines, never on a person's words about one:

- Hugging Face TGI: its launcher's and router's targets (`text_generation_launcher: Args {`, `shard-manager:
  text_generation_launcher: Waiting for shard to be ready... rank=0`, huggingface/text-generation-inference#2728, #2842);
- vLLM (`vllm.entrypoints`, "Starting vLLM API server", its throughput line "Avg prompt throughput"), SGLang
  (`sglang.launch_server`, its "Prefill batch." / "Decode batch." lines), ollama (`llama runner started`, its `[GIN]`
  request lines), Triton ("Started GRPCInferenceService"), llama.cpp's server (`llama-server`, "HTTP server listening");
- a web server's own start ("Uvicorn running on http://0.0.0.0:8000", "Application startup complete.") and the
  request lines it logs (`"POST /v1/completions HTTP/1.1" 200`).
"""

from __future__ import annotations

import re

SERVER = re.compile(
    r"text[_-]generation[_-](?:launcher|router|server)|\bshard-manager\b"
    r"|\bvllm\.entrypoints\b|\bvLLM API server\b|\bStarting vLLM\b|\bAvg prompt throughput\b"
    r"|\bsglang\.launch_server\b|\bPrefill batch\.|\bDecode batch\."
    r"|\bllama runner started\b|\bstarting llama server\b|\[GIN\]|\bllama-server\b|\bHTTP server listening\b"
    r"|\btritonserver\b|\bStarted (?:GRPCInferenceService|HTTPService)\b"
    r"|\bUvicorn running on\b|\bApplication startup complete\b"
    r"|\"(?:POST|GET) /(?:v1/|generate|completions|chat|infer|api/)",
)
# A request the server took or answered: the web server's request line, TGI's router's and vLLM's per-request lines.
REQUEST = re.compile(
    r"\"(?:POST|GET) /(?:v1/|generate|completions|chat|infer|api/)[^\"]*\" \d{3}|\bReceived request\b|\bAdded request\b"
    r"|\bAvg prompt throughput\b|\b(?:Prefill|Decode) batch\.|\btext_generation_router\b.*\b(?:Success|generate)\b|\[GIN\]",
)
# The server is up and waits for requests: a hang after it is one in serving them.
READY = re.compile(
    r"\bApplication startup complete\b|\bUvicorn running on\b|\bHTTP server listening\b|\bserver is listening on\b"
    r"|\bStarted GRPCInferenceService\b|\bllama runner started\b|\btext_generation_router\b.*\bConnected\b",
)
