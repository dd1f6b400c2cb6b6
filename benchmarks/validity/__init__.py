"""ExpertQA validity benchmark (see run.py)."""
