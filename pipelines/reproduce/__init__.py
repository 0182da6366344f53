"""``bias-hub reproduce``: each paper as a study (``pipelines/studies/*.yaml``) run through the parts."""
