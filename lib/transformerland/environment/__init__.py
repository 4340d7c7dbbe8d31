"""What a chapter's set-up cell installs, apart from the library's code."""

__all__: list[str] = []
