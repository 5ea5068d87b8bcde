use super::*;

const S: i64 = 1_000;
const M: i64 = 60 * S;

fn every(text: &str) -> Spec {
    Spec::parse("every", text).unwrap()
}

fn input(spec: &Spec, overlap: Overlap, catchup: Catchup, next: i64) -> PlanInput<'_> {
    PlanInput {
        spec,
        overlap,
        catchup,
        catchup_window_ms: M,
        next_due_ms: next,
        buffered_ms: None,
        previous_running: false,
    }
}

#[test]
fn every_ticks_fall_on_multiples_of_the_interval() {
    let s = every("30s");
    assert_eq!(s.next_after(0), Some(30 * S));
    assert_eq!(s.next_after(29_999), Some(30 * S));
    assert_eq!(s.next_after(30 * S), Some(60 * S));
    assert_eq!(s.previous_before(30 * S), Some(0));
    assert_eq!(s.previous_before(30 * S + 1), Some(30 * S));
    assert_eq!(s.count_between(0, 90 * S), 3);
    assert_eq!(s.count_between(1, 90 * S), 2);
    assert_eq!(s.count_between(1, 90 * S + 1), 3);
}

#[test]
fn cron_ticks_are_utc_and_whole_seconds() {
    let s = Spec::parse("cron", "*/5 * * * *").unwrap();
    // 1970-01-01T00:00:00Z is a tick; the next is 00:05.
    assert_eq!(s.next_after(0), Some(5 * M));
    assert_eq!(s.next_after(5 * M - 1), Some(5 * M));
    assert_eq!(s.next_after(5 * M + 500), Some(10 * M));
    assert_eq!(s.previous_before(5 * M), Some(0));
    assert_eq!(s.previous_before(5 * M + 1), Some(5 * M));
    assert_eq!(s.count_between(0, 20 * M), 4);
    let seconds = Spec::parse("cron", "*/2 * * * * *").unwrap();
    assert_eq!(seconds.next_after(1_500), Some(2 * S));
    assert_eq!(seconds.previous_before(2_500), Some(2 * S));
}

#[test]
fn bad_specs_are_refused_with_their_reason() {
    assert!(matches!(
        Spec::parse("cron", "61 * * * *"),
        Err(ScheduleError::Cron { .. })
    ));
    assert!(matches!(
        Spec::parse("cron", "not a cron"),
        Err(ScheduleError::Cron { .. })
    ));
    for bad in ["500ms", "0s", "10x", "", "367d"] {
        assert!(
            matches!(Spec::parse("every", bad), Err(ScheduleError::Every { .. })),
            "{bad}"
        );
    }
    assert!(matches!(
        Spec::parse("hourly", "x"),
        Err(ScheduleError::Invalid(_))
    ));
    assert!(check_name("nightly-report.v2").is_ok());
    assert!(check_name("a/b").is_err());
    assert!(check_name("").is_err());
}

#[test]
fn on_time_ticks_start_and_the_cursor_moves_past_them() {
    let s = every("10s");
    let p = plan(
        &input(&s, Overlap::Allow, Catchup::Skip, 10 * S),
        10 * S + 5,
    );
    assert_eq!(p.start, vec![10 * S]);
    assert_eq!((p.next_due_ms, p.skipped), (20 * S, 0));
    // Nothing due yet: nothing changes.
    let p = plan(&input(&s, Overlap::Allow, Catchup::Skip, 20 * S), 15 * S);
    assert!(p.start.is_empty());
    assert_eq!(p.next_due_ms, 20 * S);
    // Three on-time ticks (a slow pass): all start under `allow`.
    let p = plan(&input(&s, Overlap::Allow, Catchup::Skip, 10 * S), 30 * S);
    assert_eq!(p.start, vec![10 * S, 20 * S, 30 * S]);
    assert_eq!(p.next_due_ms, 40 * S);
}

#[test]
fn catchup_policies_after_downtime() {
    // Ticks every minute from 1m; the node comes back at 10m + 30s with a
    // one-minute window: 1m..9m are missed (9 ticks), 10m is on time.
    let s = every("1m");
    let now = 10 * M + 30 * S;
    let skip = plan(&input(&s, Overlap::Allow, Catchup::Skip, M), now);
    assert_eq!(skip.start, vec![10 * M]);
    assert_eq!(skip.skipped, 9);
    assert_eq!(skip.next_due_ms, 11 * M);
    let latest = plan(&input(&s, Overlap::Allow, Catchup::Latest, M), now);
    assert_eq!(latest.start, vec![9 * M, 10 * M]);
    assert_eq!(latest.skipped, 8);
    let all = plan(&input(&s, Overlap::Allow, Catchup::All, M), now);
    assert_eq!(all.start, (1..=10).map(|i| i * M).collect::<Vec<_>>());
    assert_eq!(all.skipped, 0);
    // `all` is bounded: of 200 missed ticks the newest 100 start.
    let s1 = every("1s");
    let now = 300 * S;
    let all = plan(&input(&s1, Overlap::Allow, Catchup::All, S), now);
    let missed_started = all.start.iter().filter(|t| **t < now - M).count();
    assert_eq!(missed_started, CATCHUP_ALL_LIMIT);
    assert_eq!(all.skipped, 239 - CATCHUP_ALL_LIMIT as u64);
    assert_eq!(all.next_due_ms, 301 * S);
}

#[test]
fn overlap_skip_starts_only_when_nothing_runs() {
    let s = every("10s");
    let mut i = input(&s, Overlap::Skip, Catchup::Skip, 10 * S);
    i.previous_running = true;
    let p = plan(&i, 10 * S);
    assert!(p.start.is_empty());
    assert_eq!((p.skipped, p.next_due_ms), (1, 20 * S));
    i.previous_running = false;
    // Two ticks handled together: the newest starts, the older is skipped.
    let p = plan(&i, 20 * S);
    assert_eq!(p.start, vec![20 * S]);
    assert_eq!(p.skipped, 1);
}

#[test]
fn overlap_buffer_one_keeps_the_newest_waiting_tick() {
    let s = every("10s");
    let mut i = input(&s, Overlap::BufferOne, Catchup::Skip, 10 * S);
    i.previous_running = true;
    let p = plan(&i, 10 * S);
    assert_eq!(
        (p.start.clone(), p.buffered, p.skipped),
        (vec![], Some(10 * S), 0)
    );
    // Another tick while still running: it replaces the waiting one.
    i.buffered_ms = p.buffered;
    i.next_due_ms = p.next_due_ms;
    let p = plan(&i, 20 * S);
    assert_eq!(
        (p.start.clone(), p.buffered, p.skipped),
        (vec![], Some(20 * S), 1)
    );
    // Still running, no new tick: nothing changes.
    i.buffered_ms = p.buffered;
    i.next_due_ms = p.next_due_ms;
    let p = plan(&i, 25 * S);
    assert_eq!(
        (p.start.clone(), p.buffered, p.skipped),
        (vec![], Some(20 * S), 0)
    );
    assert_eq!(p.next_due_ms, 30 * S);
    // The run ended: the waiting tick starts.
    i.previous_running = false;
    let p = plan(&i, 25 * S);
    assert_eq!(
        (p.start.clone(), p.buffered, p.skipped),
        (vec![20 * S], None, 0)
    );
    // The run ended as a new tick came due: the waiting one starts, the
    // new one waits.
    let p = plan(&i, 30 * S);
    assert_eq!(
        (p.start.clone(), p.buffered, p.skipped),
        (vec![20 * S], Some(30 * S), 0)
    );
}

#[test]
fn a_new_schedule_starts_at_the_first_tick_after_its_creation() {
    let new = NewSchedule {
        name: "n".into(),
        program: "p".into(),
        args: TaggedList::default(),
        spec: every("30s"),
        overlap: Overlap::Skip,
        catchup: Catchup::Latest,
        catchup_window_ms: DEFAULT_CATCHUP_WINDOW_MS,
        paused: false,
    };
    let row = new.row(45 * S).unwrap();
    assert_eq!(row.next_due_ms, 60 * S);
    let mut never = new.clone();
    never.spec = Spec::parse("cron", "0 0 30 2 *").unwrap();
    assert!(matches!(never.row(0), Err(ScheduleError::NeverDue(_))));
    let mut window = new;
    window.catchup_window_ms = 0;
    assert!(window.row(0).is_err());
}
