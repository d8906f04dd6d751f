# aggpay: tasks. `just test` is exactly what CI runs.

set shell := ["bash", "-euo", "pipefail", "-c"]

default:
    @just --list

# Format check, lints as errors, every test, and the examples against the mock.
test:
    cargo fmt --all -- --check
    cargo clippy --workspace --all-targets --locked -- -D warnings
    cargo test --workspace --locked
    {{just_executable()}} examples

# Run the client examples against an in-process mock. Without `-p`, the
# workspace's features: the build `cargo test --workspace` made is reused.
examples:
    cargo run --locked -q --example payment_charges > /dev/null
    cargo run --locked -q --example batches_to_csv > /dev/null
    tmp=$(mktemp -d) && cargo run --locked -q --example checkpoint -- "$tmp/state.txt" > /dev/null; rm -rf "$tmp"
    tmp=$(mktemp -d) && cargo run --locked -q --example rotate_key -- "$tmp/secret.txt" > /dev/null; rm -rf "$tmp"

# Run the mock server (pass flags after `--`, e.g. `just mock --port 8080 --info-file f.json`).
mock *ARGS:
    cargo run --locked --release -p aggpay-mock -- {{ARGS}}

# Run the conformance harness (`just conformance --mock`, or --base-url …).
conformance *ARGS:
    cargo run --locked --release -p aggpay-conformance -- {{ARGS}}

# Build the API documentation, warnings as errors.
doc:
    RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked

# Benchmarks (release): print a table, write target/bench.json.
bench:
    cargo bench --locked -p aggpay-conformance --bench evidence
    cargo bench --locked -p aggpay-sync --bench sync

# Mirror settlements into a SQLite database (e.g. `just sync --db demo.db --mock`).
sync *ARGS:
    cargo run --locked --release -p aggpay-sync -- {{ARGS}}
