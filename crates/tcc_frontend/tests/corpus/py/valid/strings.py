# args: ["ab"]
from tcc_engine.primitives import program

@program
async def run(s):
    t = s + "cd"
    return [t, len(t), t[0], t[-1], t == "abcd", s * 0 if False else t]
