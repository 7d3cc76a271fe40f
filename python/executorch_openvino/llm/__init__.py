"""Large language models through the delegate: KV caches kept inside OpenVINO as state
(stateful.py)."""
