// Booking saga that compensates on a failure or a cancellation: hold the
// room, charge the deposit, then wait for the guest to confirm. When the
// charge fails, or the booking is cancelled while it waits
// (`irkit tcc cancel ID`), the failed step's `Err` refunds and releases
// what was done and returns the error. (The Rust subset has no exceptions:
// an awaited operation without `?` is a Result, and an entry that returns
// `Err` completes with it, a cancellation's
// `Err("CancelledError: the execution was cancelled")` included.
// `irkit tcc terminate ID` stops at once.)
use tcc_rust_prelude::{effect, wait_for_event};

struct Confirmed {
    booking: String,
    status: String,
    guest: String,
}

async fn run(booking: String) -> Result<Confirmed, String> {
    effect("room.hold", || ()).await?;
    match effect("deposit.charge", || ()).await {
        Ok(_) => {}
        Err(e) => {
            let _released = effect("room.release", || ()).await;
            return Err(e);
        }
    }
    let answer: Result<String, String> = wait_for_event("guest.confirmed").await;
    match answer {
        Ok(guest) => Ok(Confirmed { booking, status: String::from("confirmed"), guest }),
        Err(e) => {
            let _refunded = effect("deposit.refund", || ()).await;
            let _released = effect("room.release", || ()).await;
            Err(e)
        }
    }
}
