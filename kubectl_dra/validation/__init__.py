"""The API server's rules for DRA objects: field errors per kind, the create/update
strategy (defaults, dropping fields of disabled gates) and the admission decision."""
