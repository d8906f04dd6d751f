//! The PostgreSQL fixture starts a real server, answers SQL, and stops.

use aggpay_testkit::PgCluster;

#[test]
fn a_cluster_starts_answers_and_stops() {
    let Some(pg) = PgCluster::start() else { return };
    let url = pg.database("fixture");
    assert!(url.ends_with("/fixture"));
    assert_eq!(pg.sql("fixture", "SELECT 40 + 2"), "42");
    let port = pg.port();
    drop(pg);
    assert!(
        std::net::TcpStream::connect(("127.0.0.1", port)).is_err(),
        "the server still listens after the drop"
    );
}
