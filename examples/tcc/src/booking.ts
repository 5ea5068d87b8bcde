// Booking saga that compensates on a failure or a cancellation: hold the
// room, charge the deposit, then wait for the guest to confirm. When the
// charge fails, or the booking is cancelled while it waits
// (`irkit tcc cancel ID`), the handler refunds and releases what was done
// and rethrows: a cancellation then ends `cancelled`, a failure `failed`.
// (`irkit tcc terminate ID` stops at once, without the handler.)
import { effect, waitForEvent } from "@tcc-engine/primitives";

type Booking = { id: string; room: string; deposit: number };

export default async function run(booking: Booking) {
  let done = 0;
  try {
    await effect("room.hold", { input: { room: booking.room } });
    done = 1;
    await effect("deposit.charge", { input: { amount: booking.deposit } });
    done = 2;
    const guest = await waitForEvent("guest.confirmed");
    return { booking: booking.id, status: "confirmed", guest: guest };
  } catch (e) {
    if (done >= 2) {
      await effect("deposit.refund", { input: { amount: booking.deposit } });
    }
    if (done >= 1) {
      await effect("room.release", { input: { room: booking.room } });
    }
    throw e;
  }
}
