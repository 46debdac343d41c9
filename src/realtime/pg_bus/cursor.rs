//! Where a listener is in the stream, and reading it in id order: a missing
//! id is a gap to wait at, until it fills or can no longer.

use std::time::Instant;

use super::payload::deliver;
use crate::realtime::hub::Hub;

/// Event rows from `$1` on, in id order, with the `xmin` of the snapshot
/// they were read in (every transaction below it has ended). Rows without a
/// frame (audit entries written where no bus reads them) are read too: a
/// missing id is a gap to wait at, so every id must be seen.
pub(super) const READ_ROWS: &str = "\
    SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint AS xmin, o.id, o.payload \
    FROM (SELECT 1) one LEFT JOIN LATERAL ( \
      SELECT id, payload FROM events WHERE id >= $1 ORDER BY id LIMIT 1000) o ON true \
    ORDER BY o.id";
/// The `LIMIT` above: a full batch means read again at once.
pub(super) const READ_BATCH: usize = 1000;

/// Where a listener is in the outbox: the next id to deliver, the gap it
/// waits at (if any), and when it last read.
pub(super) struct Cursor {
    pub(super) next_id: i64,
    pub(super) gap: Option<Gap>,
    pub(super) read_at: Instant,
}

/// Ids from `id` on are missing while later ones are visible: their
/// transactions have not committed yet, or rolled back. Once a snapshot's
/// `xmin` reaches `barrier` (a transaction id taken after the gap was seen),
/// every transaction that could hold them has ended, and the ids still
/// missing never will appear.
#[derive(Clone, Copy)]
pub(super) struct Gap {
    pub(super) id: i64,
    /// Reads that stopped here.
    pub(super) reads: u32,
    pub(super) barrier: Option<i64>,
}

impl Cursor {
    /// Delivers the rows of one read in id order, up to the first gap that
    /// may still fill. Returns whether to read again soon (waiting at a gap,
    /// or more rows than one read returns).
    pub(super) fn advance(&mut self, rows: &[tokio_postgres::Row], hub: &Hub) -> bool {
        let Some(first) = rows.first() else {
            return false;
        };
        let xmin: i64 = first.get(0);
        for row in rows {
            let Some(id) = row.get::<_, Option<i64>>(1) else {
                continue;
            };
            if id > self.next_id {
                match &mut self.gap {
                    Some(gap) if gap.id == self.next_id => {
                        if gap.barrier.is_none_or(|barrier| xmin < barrier) {
                            gap.reads += 1;
                            return true;
                        }
                    }
                    _ => {
                        self.gap = Some(Gap {
                            id: self.next_id,
                            reads: 1,
                            barrier: None,
                        });
                        return true;
                    }
                }
            }
            self.gap = None;
            if let Some(payload) = row.get::<_, Option<&str>>(2) {
                deliver(hub, payload);
            }
            self.next_id = id + 1;
        }
        rows.len() >= READ_BATCH
    }
}
