"""The one instrumentation layer: the hooks the foundation times its work with (`hooks`) and the
OpenTelemetry tracer a door may install (`tracing`, the `otel` extra)."""
