"""App profiles for `analyze app`: how to install, configure and drive a real application (TOML)."""
