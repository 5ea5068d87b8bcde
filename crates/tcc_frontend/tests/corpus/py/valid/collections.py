# args: []
from tcc_engine.primitives import program

@program
async def run():
    d = {"a": 1, "b": [1, 2]}
    d["c"] = 3
    d["b"].append(3)
    xs = [3, 1, 2]
    xs[0] = 10
    xs[-1] += 5
    alias = xs
    alias.append(99)
    return [d, xs, len(d), alias is xs, [1, 2] == [1, 2], [1, 2] is [1, 2], {"x": 1} == {"x": 1}]
