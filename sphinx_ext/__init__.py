"""The book's own Sphinx extensions, each a module that ``_config.yml`` names in ``local_extensions``."""
