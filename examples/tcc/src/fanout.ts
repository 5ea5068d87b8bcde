// Fan-out: ask three carriers for a quote at once, then pick the cheapest
// of the carriers that answered with a price (null: no quote).
import { effect } from "@tcc-engine/primitives";

function cheapest(quotes: (number | null)[], names: string[]) {
  let best: number | null = null;
  let bestName: string | null = null;
  for (let i = 0; i < quotes.length; i++) {
    const q = quotes[i];
    if (q !== null && (best === null || q < best)) {
      best = q;
      bestName = names[i];
    }
  }
  return { carrier: bestName, price: best };
}

export default async function run() {
  const quotes = await Promise.all([effect("quote.ups"), effect("quote.dhl"), effect("quote.fedex")]);
  return cheapest(quotes, ["ups", "dhl", "fedex"]);
}
