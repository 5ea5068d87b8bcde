// args: [["a", "b", "c", "z", "b"]]
function classify(s) {
  let out = "";
  switch (s) {
    case "a":
      out += "A";
    case "b":
      out += "B";
      break;
    case "c": {
      out += "C";
      break;
    }
    default:
      out += "?";
  }
  return out;
}

export default async function run(xs) {
  const res = [];
  for (const x of xs) {
    switch (x) {
      case "z":
        continue;
      default:
        res.push(classify(x));
    }
  }
  return res;
}
