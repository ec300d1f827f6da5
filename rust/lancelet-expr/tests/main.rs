//! Integration tests of lancelet-expr: parsing, evaluation, errors, SQL functions, a reference evaluator.
//! One binary with a module per file: a binary per file linked the dependency tree each time.

mod errors;
mod eval;
mod parse;
mod pylance_funcs;
mod reference;
mod sql_functions;
