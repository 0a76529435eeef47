"""Embedders: what one is (`base`), one file per provider (`onnx`, the default `local` MiniLM;
`torch`, sentence-transformers; `voyage`), the configured ones made once per process (`configured`)
and the fallback chain (`fallback`). The local model's tokenizer ships in `minilm/`."""
