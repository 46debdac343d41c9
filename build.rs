//! Tells the test suites whether a PostgreSQL server is configured, so that
//! without one their PostgreSQL variants are reported as ignored (with the
//! reason) instead of passing without running.

fn main() {
    println!("cargo::rerun-if-env-changed=BATON_TEST_POSTGRES_URL");
    println!("cargo::rustc-check-cfg=cfg(baton_postgres_tests)");
    if std::env::var_os("BATON_TEST_POSTGRES_URL").is_some_and(|url| !url.is_empty()) {
        println!("cargo::rustc-cfg=baton_postgres_tests");
    }
}
