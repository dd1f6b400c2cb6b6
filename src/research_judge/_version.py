"""The package version, in a module of its own so low layers (the clients' User-Agent) can
read it without importing the package's public face."""

__version__ = "0.1.0"
