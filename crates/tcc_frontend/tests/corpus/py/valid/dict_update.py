# args: []
from tcc_engine.primitives import program

@program
async def run():
    stock = {"apple": 3, "pear": 0}
    stock["pear"] = stock["pear"] + 5
    stock["fig"] = 1
    order = {"items": ["apple"], "total": 0}
    order["items"].append("pear")
    order["total"] = stock["apple"] * 2 + stock["pear"]
    return [stock, order, stock == {"apple": 3, "pear": 5, "fig": 1}]
