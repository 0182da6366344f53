"""The lower layer that builders and pipelines both import.

Console output and per-run logs (``console``), atomic files and folder swaps (``files``),
Markdown helpers (``text``), upstream sources with pinned checksums (``sources``), dataset
cards (``card``), registry-shipped model folders (``model_wheels``), the on-disk cache of
API responses (``api_cache``, ``api_cache_openai``) and coreference in the CoNLL-2012 format
(``conll``: the WinoBias builder reads its files with it, ``embeddings correlate`` a system's output).

Nothing here imports a builder's dataset package or ``pipelines``: a test over the import
graph (``tests/test_import_graph.py``) keeps it so.
"""
