// args: ["ab"]
export default async function run(s) {
  const t = s + "cd";
  return [t, t.length, t[0], t[t.length - 1], t === "abcd", `${t}!${1 + 1}`, "n=" + 5, "x" + null];
}
