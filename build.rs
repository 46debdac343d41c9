//! Tells the test suites whether a PostgreSQL server is configured, so that
//! without one their PostgreSQL variants are reported as ignored (with the
//! reason) instead of passing without running.

fn main() {
    println!("cargo::rerun-if-env-changed=BATON_TEST_POSTGRES_URL");
    println!("cargo::rerun-if-env-changed=BATON_TEST_PREVIOUS_BIN");
    println!("cargo::rustc-check-cfg=cfg(baton_postgres_tests)");
    println!("cargo::rustc-check-cfg=cfg(baton_previous_release_tests)");
    let set = |var: &str| std::env::var_os(var).is_some_and(|value| !value.is_empty());
    if set("BATON_TEST_POSTGRES_URL") {
        println!("cargo::rustc-cfg=baton_postgres_tests");
        // The rolling-upgrade storm (tests/rolling_upgrade.rs) runs the
        // previous release's binary beside this one on PostgreSQL.
        if set("BATON_TEST_PREVIOUS_BIN") {
            println!("cargo::rustc-cfg=baton_previous_release_tests");
        }
    }
}
