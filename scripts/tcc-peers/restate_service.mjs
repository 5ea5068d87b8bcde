// Restate side of the peer benchmark (scripts/tcc-peers.sh): service `bench`, handler `small3`,
// three durable steps (`ctx.run`) then the argument back, served with the TypeScript SDK's HTTP/2
// handler on 127.0.0.1:$PORT.
import * as http2 from "node:http2";
import * as restate from "@restatedev/restate-sdk";

const bench = restate.service({
  name: "bench",
  handlers: {
    small3: async (ctx, n) => {
      await ctx.run("a", async () => 1);
      await ctx.run("b", async () => 1);
      await ctx.run("c", async () => 1);
      return n;
    },
  },
});

const port = parseInt(process.env.PORT ?? "9080", 10);
http2
  .createServer(restate.endpoint().bind(bench).http2Handler())
  .listen(port, "127.0.0.1", () => console.log(`ready on 127.0.0.1:${port}`));
