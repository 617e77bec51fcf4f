"""Generated cel-spec AST protos (cel.expr syntax/checked), Apache-2.0."""
