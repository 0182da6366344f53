"""The lower layer that builders and pipelines both import: ``console``, ``files``, ``text``,
``sources``, ``card``, ``model_wheels``, ``api_cache`` / ``api_cache_openai`` and ``conll``
(CoNLL-2012 coreference, for WinoBias and ``embeddings correlate``). Nothing here imports a
builder's dataset package or ``pipelines`` (``tests/test_import_graph.py`` keeps it so).
"""
