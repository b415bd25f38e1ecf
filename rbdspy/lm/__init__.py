"""rbdspy.lm: the embedded local LM engine and the LM / embedder factories.

    lm = make_lm("local")          # llama.cpp in-process; or "local-fast", or "openai/gpt-4o-mini"
    embed = make_embedder("local") # MiniLM-L6, offline; or "hash", or a LiteLLM embedding model

Importing this package is cheap: xllamacpp, torch and sentence-transformers load on first use.
`rbdspy.lm.usage.LmUsage` counts the LM calls and tokens a block of work spent (bench, compile, eval).
"""

from rbdspy.lm.factory import make_embedder, make_lm
from rbdspy.lm.local_engine import AsyncLlamaEngine, LlamaEngine
from rbdspy.lm.model_files import ensure_model

__all__ = ["AsyncLlamaEngine", "LlamaEngine", "ensure_model", "make_embedder", "make_lm"]
