

# The modules the rest of toolturn imports (tests/house/test_package_api.py holds every import from
# outside the package to them); the others are its own.
__all__ = [
    "admission", "background", "client_tools", "codecs", "connection", "identity", "next_step",
    "openai_errors", "record_files", "recorder", "recording", "request_shape", "sent", "sent_at",
    "server", "side_endpoints", "sse",
]
