import os, sys, textwrap
OUT = sys.argv[1]
os.makedirs(OUT + "/valid", exist_ok=True)
os.makedirs(OUT + "/invalid", exist_ok=True)

TYPES = """    (type Void void)
    (type Bool bool)
    (type Int int)
    (type Float float)
    (type Vec2 vector float 2)
    (type Vec3 vector float 3)
    (type Vec4 vector float 4)
    (type IVec2 vector int 2)
    (type BVec2 vector bool 2)
    (type Mat2 matrix 2 2)
    (type Mat23 matrix 2 3)
    (type Mat32 matrix 3 2)
    (type Sampler sampler2D)
    (type Cell record "Cell" (field "color" Vec4) (field "weight" Int))
    (type Cells array Cell 2)
    (type Floats array Float 3)"""

UNIFORMS = """    (scalar tint "tint" Vec4)
    (scalar image "image" Sampler)
    (record cell "cell" Cell)
    (array weights "weights" Float 4)"""

VFUNC = """      (function vmain "vmain" Void
        (parameters)
        (registers (register r0 Vec3) (register r1 Vec4){VREGS})
        (block entry
          (load r0 (stage position_in))
          (construct r1 r0 (float 1.0))
          (store (stage clip) r1){VBODY}
          (return)))"""

FFUNC = """      (function fmain "fmain" Void
        (parameters)
        (registers
          (register r0 Vec4) (register r1 Int) (register r2 Float) (register r3 Bool){FREGS})
        (block entry
          (construct r0 (float 0.0) (float 1.0) (float 0.0) (float 1.0))
          (store (stage color) r0){FBODY}
          (return)))"""

def module(types="", uniforms="", viface="", vregs="", vbody="", vfuncs="", vfunc=None,
           fiface="", fregs="", fbody="", ffuncs="", ffunc=None, ventry="vmain", fentry="fmain",
           vbase_iface=None, fbase_iface=None):
    vf = vfunc if vfunc is not None else VFUNC.replace("{VREGS}", vregs).replace("{VBODY}", vbody)
    ff = ffunc if ffunc is not None else FFUNC.replace("{FREGS}", fregs).replace("{FBODY}", fbody)
    vbi = vbase_iface if vbase_iface is not None else """      (in position_in "position_in" Vec3 0 none)
      (out clip "clip" Vec4 -1 position)"""
    fbi = fbase_iface if fbase_iface is not None else """      (out color "color" Vec4 0 fragment_color)"""
    return f"""(module 1
  (types
{TYPES}{types})
  (uniforms
{UNIFORMS}{uniforms})
  (vertex {ventry}
    (interface
{vbi}{viface})
    (functions
{vf}{vfuncs}))
  (fragment {fentry}
    (interface
{fbi}{fiface})
    (functions
{ff}{ffuncs})))
"""

def frag(blocks, regs="", params="", name="fmain", fid="fmain", ret="Void"):
    """A fragment (or any) function with the standard registers and custom blocks."""
    return f"""      (function {fid} "{name}" {ret}
        (parameters{params})
        (registers
          (register r0 Vec4) (register r1 Int) (register r2 Float) (register r3 Bool){regs})
{blocks}"""

cases = []
def ok(name, desc, text):
    cases.append(("valid", name, None, None, desc, text))
def bad(name, rule, msg, desc, text):
    assert "/*^*/" in text, name
    cases.append(("invalid", name, rule, msg, desc, text))

STORE_COLOR = """          (construct r0 (float 0.0) (float 1.0) (float 0.0) (float 1.0))
          (store (stage color) r0)"""

# ---------------------------------------------------------------- valid baseline
ok("baseline", "the corpus template itself", module())
ok("spec_minimal", "spec 10.3: names that only differ by case or normalization are distinct",
   module(uniforms='\n    (scalar tint2 "Tint" Vec4)\n    (scalar e1 "\u00e9" Float)\n    (scalar e2 "e\u0301" Float)'))

# ---------------------------------------------------------------- containers (3)
bad("entry_with_parameters", "container", "must be parameterless",
    "the selected entry is a parameterless function",
    module(ffunc=frag("""        (block entry
""" + STORE_COLOR + """
          (return)))""", params=" (parameter p Int)").replace('      (function fmain', '      /*^*/(function fmain')))
bad("entry_not_void", "container", "must return void",
    "the selected entry returns void",
    module(ffunc=frag("""        (block entry
""" + STORE_COLOR + """
          (return (int 1))))""", ret="Int").replace('      (function fmain', '      /*^*/(function fmain')))
ok("entry_is_selected_not_first", "the entry is selected explicitly, not by list order or a main name",
   module(ffuncs="", ffunc=frag("""        (block entry
          (return (int 1))))""", fid="main", name="main", ret="Int") + "\n" + frag("""        (block entry
""" + STORE_COLOR + """
          (return)))""", fid="fmain", name="fragment_entry")))
bad("empty_function_name", "container", "function name is empty", "function names are nonempty",
    module(ffuncs="\n      /*^*/(function h \"\" Void (parameters) (registers) (block b (return)))"))
bad("duplicate_function_name", "container", "already used by function `fmain`",
    "function names are unique within a stage, compared exactly",
    module(ffuncs="\n      /*^*/(function h \"fmain\" Void (parameters) (registers) (block b (return)))"))
ok("function_names_per_stage", "function names are unique per stage only; interface and function names are separate collections",
   module(vfuncs="\n      (function h \"helper\" Void (parameters) (registers) (block b (return)))\n      (function g \"clip\" Void (parameters) (registers) (block b (return)))",
          ffuncs="\n      (function h \"helper\" Void (parameters) (registers) (block b (return)))\n      (function g \"color\" Void (parameters) (registers) (block b (return)))"))
bad("empty_uniform_name", "container", "uniform name is empty", "uniform names are nonempty",
    module(uniforms='\n    /*^*/(scalar x "" Float)'))
bad("duplicate_uniform_name", "container", "unique module-wide", "uniform names are unique module-wide",
    module(uniforms='\n    /*^*/(scalar tint_again "tint" Float)'))
bad("empty_interface_name", "container", "interface name is empty", "interface names are nonempty",
    module(fiface='\n      /*^*/(in x "" Float 3 none)'))
bad("duplicate_interface_name_across_directions", "container", "unique across both directions",
    "interface names are unique across both directions of a stage",
    module(fiface='\n      /*^*/(in again "color" Vec4 3 none)'))
ok("interface_names_per_stage", "the same interface name in both stages; uniform and interface names are separate",
   module(viface='\n      (out color "color" Vec4 3 none)\n      (out t "tint" Vec4 4 none)', vbody="\n          (store (stage color) r1)\n          (store (stage t) r1)"))
bad("empty_record_name", "type", "record display name is empty", "record display names are nonempty",
    module(types='\n    /*^*/(type E record "" (field "a" Int))'))
bad("empty_field_name", "type", "empty name", "record field names are nonempty",
    module(types='\n    (type E record "E" /*^*/(field "" Int))'))
bad("duplicate_field_name", "type", "declares field \"a\" twice", "field names are unique within their record",
    module(types='\n    (type E record "E" (field "a" Int) /*^*/(field "a" Float))'))
ok("record_display_names_need_not_be_unique", "two records may share a display name; fields unique per record only",
   module(types='\n    (type E1 record "E" (field "a" Int))\n    (type E2 record "E" (field "a" Int))\n    (type Empty record "Empty")'))

# ---------------------------------------------------------------- interface (3.1, 6, 6.3)
bad("missing_position_output", "interface", "must declare its `position` output",
    "a vertex stage declares its Position output",
    module(vbase_iface='      (in position_in "position_in" Vec3 0 none)\n      (out clip "clip" Vec4 -1 none)').replace("  (vertex vmain", "  /*^*/(vertex vmain"))
bad("missing_fragment_color_output", "interface", "primary `fragment_color` output",
    "a fragment stage declares its FragmentColor output, even if it always discards",
    module(fbase_iface='      (out color "color" Vec4 0 color)', ffunc=frag("        (block entry (discard)))")).replace("  (fragment fmain", "  /*^*/(fragment fmain"))
ok("always_discarding_fragment", "a fragment entry that always discards needs no output assignment",
   module(ffunc=frag("        (block entry (discard)))")))
bad("position_not_vec4", "interface", "`position` must have type vector float 4",
    "Position is a floating vec4",
    module(vbase_iface='      (in position_in "position_in" Vec3 0 none)\n      /*^*/(out clip "clip" Vec3 -1 position)', vbody="").replace("(store (stage clip) r1)", "(store (stage clip) r0)"))
bad("position_with_location", "interface", "`position` must have location -1",
    "Position has location -1",
    module(vbase_iface='      (in position_in "position_in" Vec3 0 none)\n      /*^*/(out clip "clip" Vec4 0 position)'))
bad("position_vertex_input", "interface", "not a vertex input",
    "Position is a vertex output or fragment input",
    module(viface='\n      /*^*/(in p2 "p2" Vec4 -1 position)'))
bad("position_fragment_output", "interface", "not a fragment output",
    "Position is a vertex output or fragment input",
    module(fiface='\n      /*^*/(out p2 "p2" Vec4 -1 position)'))
ok("fragment_position_input", "fragment Position is supplied by rasterization, not linked",
   module(fiface='\n      (in frag_coord "frag_coord" Vec4 -1 position)'))
bad("fragment_color_in_vertex", "interface", "`fragment_color` is a fragment output",
    "FragmentColor is a fragment output",
    module(viface='\n      /*^*/(out c "c" Vec4 2 fragment_color)'))
bad("fragment_color_not_vec4", "interface", "`fragment_color` must have type vector float 4",
    "FragmentColor is a floating vec4",
    module(fbase_iface='      /*^*/(out color "color" Vec3 0 fragment_color)'))
bad("repeated_location", "interface", "location 0 is already used by output `color`",
    "locations do not repeat within one direction",
    module(fiface='\n      /*^*/(out second "second" Vec4 0 none)'))
ok("location_per_direction", "the same location may be used by an input and an output; -1 may repeat",
   module(viface='\n      (out a "a" Vec4 -1 none)\n      (out b "b" Vec4 -1 none)\n      (out c "c" Vec4 0 none)', vbody="\n          (store (stage a) r1)\n          (store (stage b) r1)\n          (store (stage c) r1)"))
bad("repeated_semantic", "interface", "semantic `color` is already used",
    "non-None semantics do not repeat within one direction",
    module(viface='\n      (out a "a" Vec4 1 color)\n      /*^*/(out b "b" Vec4 2 color)', vbody="\n          (store (stage a) r1)\n          (store (stage b) r1)"))
bad("negative_location", "interface", "location -2 is invalid",
    "a location is -1 (unspecified) or nonnegative (project decision)",
    module(fiface='\n      /*^*/(out x "x" Vec4 -2 none)'))
LINK_V = "\n          (store (stage v) r1)"
ok("link_explicit_location_ignores_names", "an explicit input location matches the same output location regardless of names",
   module(viface='\n      (out v "vertex_name" Vec4 3 none)', vbody=LINK_V, fiface='\n      (in f "fragment_name" Vec4 3 none)'))
ok("link_by_name", "if both locations are -1, match by exact name",
   module(viface='\n      (out v "uv" Vec4 -1 texcoord)', vbody=LINK_V, fiface='\n      (in f "uv" Vec4 -1 none)'))
ok("unconsumed_vertex_output", "unconsumed vertex outputs are allowed",
   module(viface='\n      (out v "unused" Vec4 5 none)', vbody=LINK_V))
bad("link_unmatched_input", "interface", "has no matching vertex output",
    "every ordinary fragment input requires a vertex output, even unused",
    module(fiface='\n      /*^*/(in f "missing" Vec4 3 none)'))
bad("link_no_name_fallback", "interface", "explicit locations match only explicit locations",
    "no name fallback from an explicit location",
    module(viface='\n      (out v "uv" Vec4 -1 none)', vbody=LINK_V, fiface='\n      /*^*/(in f "uv" Vec4 3 none)'))
bad("link_no_mixed_inference", "interface", "no mixed-mode inference",
    "names match only when both locations are -1",
    module(viface='\n      (out v "uv" Vec4 3 none)', vbody=LINK_V, fiface='\n      /*^*/(in f "uv" Vec4 -1 none)'))
bad("link_name_case", "interface", "has no matching vertex output",
    "name matching is exact and case-sensitive",
    module(viface='\n      (out v "UV" Vec4 -1 none)', vbody=LINK_V, fiface='\n      /*^*/(in f "uv" Vec4 -1 none)'))
bad("link_type_mismatch", "interface", "types must be equal",
    "linked types are equal",
    module(viface='\n      (out v "uv" Vec4 -1 none)', vbody=LINK_V, fiface='\n      /*^*/(in f "uv" Vec3 -1 none)'))
bad("link_array_length_mismatch", "interface", "types must be equal",
    "linked array lengths are equal",
    module(types='\n    (type F4 array Float 4)', viface='\n      (out v "w" Floats 2 none)', vregs=" (register r2 Floats)",
           vbody="\n          (construct r2 (float 1.0) (float 2.0) (float 3.0))\n          (store (stage v) r2)",
           fiface='\n      /*^*/(in f "w" F4 2 none)'))
bad("link_nominal_record_mismatch", "interface", "types must be equal",
    "linked records are the same declaration, not an equal-looking one",
    module(types='\n    (type Other record "Cell" (field "color" Vec4) (field "weight" Int))',
           viface='\n      (out v "cell" Cell 2 none)', vregs=" (register r2 Cell)",
           vbody="\n          (construct r2 r1 (int 1))\n          (store (stage v) r2)",
           fiface='\n      /*^*/(in f "cell" Other 2 none)'))
ok("link_records_and_arrays", "arrays of records link when the declaration and lengths agree",
   module(viface='\n      (out v "cells" Cells 2 none)', vregs=" (register r2 Cell) (register r3 Cells)",
          vbody="\n          (construct r2 r1 (int 1))\n          (construct r3 r2 r2)\n          (store (stage v) r3)",
          fiface='\n      (in f "cells" Cells 2 none)'))
bad("link_tag_disagreement", "interface", "is tagged `texcoord`",
    "Color/TexCoord tags agree when both sides specify one",
    module(viface='\n      (out v "uv" Vec4 -1 color)', vbody=LINK_V, fiface='\n      /*^*/(in f "uv" Vec4 -1 texcoord)'))
ok("link_tag_none_is_unspecified", "None leaves the tag unspecified",
   module(viface='\n      (out v "uv" Vec4 -1 color)', vbody=LINK_V, fiface='\n      (in f "uv" Vec4 -1 none)'))

# ---------------------------------------------------------------- types (4)
bad("void_register", "register", "has type void", "void is not a register type",
    module(fregs="\n          /*^*/(register r9 Void)"))
bad("void_parameter", "type", "parameter type is void", "void is not a parameter type",
    module(ffuncs="\n      (function h \"h\" Void (parameters /*^*/(parameter p Void)) (registers) (block b (return)))"))
bad("void_interface", "type", "interface type is void", "void is not an interface type",
    module(fiface='\n      /*^*/(in x "x" Void 4 none)'))
bad("void_array_element", "type", "array element type is void", "void is not an array element type",
    module(types='\n    /*^*/(type Voids array Void 2)'))
bad("recursive_unused_record", "binding", "recursive type", "recursive types are invalid even unused (rejected while binding)",
    module(types='\n    /*^*/(type Node record "Node" (field "next" Nodes))\n    (type Nodes array Node 2)'))
ok("structural_equality", "two declarations of one structural shape are the same type",
   module(types='\n    (type Colour vector float 4)', fregs=" (register r9 Colour)", fbody="\n          (copy r9 r0)"))
bad("nominal_records", "instruction", "copy needs a source of exactly the result's type",
    "equal-looking record declarations are distinct types",
    module(types='\n    (type Twin record "Cell" (field "color" Vec4) (field "weight" Int))',
           fregs=" (register r9 Cell) (register r10 Twin)",
           fbody="\n          (construct r9 r0 (int 1))\n          /*^*/(copy r10 r9)"))

# ---------------------------------------------------------------- definite assignment (5.2)
bad("read_before_write", "definite-assignment", "register r1 is read before it is definitely assigned",
    "a read needs a prior assignment",
    module(fbody="\n          (add r1 /*^*/r1 (int 1))"))
bad("self_update_needs_old_value", "definite-assignment", "register r1 is read",
    "r = add r, x reads the old value before assigning",
    module(fbody="\n          (copy r2 (float 1.0))\n          (add r1 /*^*/r1 (int 1))"))
ok("repeated_writes", "a register may be assigned repeatedly",
   module(fbody="\n          (copy r1 (int 1))\n          (copy r1 (int 2))\n          (add r1 r1 r1)"))
JOIN_BAD = frag("""        (block entry
          (copy r3 (bool true))
          (branch_if r3 left right))
        (block left
          (copy r1 (int 1))
          (branch join))
        (block right
          (branch join))
        (block join
          (add r1 /*^*/r1 (int 1))
""" + STORE_COLOR + """
          (return)))""")
bad("join_one_branch", "definite-assignment", "register r1 is read",
    "a join intersects its predecessors' assignments", module(ffunc=JOIN_BAD))
ok("join_both_branches", "assignment on both branches reaches the join",
   module(ffunc=JOIN_BAD.replace("(block right\n          (branch join))", "(block right\n          (copy r1 (int 2))\n          (branch join))").replace("/*^*/", "")))
bad("constant_condition", "definite-assignment", "register r1 is read",
    "both successors of a constant condition are considered",
    module(ffunc=JOIN_BAD.replace("(branch_if r3 left right)", "(branch_if (bool true) left right)").replace("(copy r3 (bool true))\n", "")))
LOOP = frag("""        (block entry
          (copy r1 (int 0))
          (branch test))
        (block test
          (less r3 r1 (int 10))
          (branch_if r3 body exit))
        (block body
          (add r1 r1 (int 1))
          (branch test))
        (block exit
""" + STORE_COLOR + """
          (return)))""")
ok("loop", "spec section 8 loop sketch", module(ffunc=LOOP))
bad("loop_first_iteration", "definite-assignment", "register r1 is read",
    "assignment only on the back-edge does not justify the first iteration",
    module(ffunc=LOOP.replace("          (copy r1 (int 0))\n", "").replace("(less r3 r1 (int 10))", "(less r3 /*^*/r1 (int 10))")))
ok("unreachable_block_availability", "unreachable blocks are type-checked but not availability-checked",
   module(ffunc=frag("""        (block entry
""" + STORE_COLOR + """
          (return))
        (block dead
          (add r1 r1 (int 1))
          (branch dead)))""")))
bad("unreachable_block_types", "instruction", "is not defined for operands int and float",
    "unreachable blocks are still type-checked",
    module(ffunc=frag("""        (block entry
""" + STORE_COLOR + """
          (return))
        (block dead
          /*^*/(add r1 r1 (float 1.0))
          (branch dead)))""")))
bad("branch_condition_availability", "definite-assignment", "register r3 is read",
    "a branch condition is a read",
    module(ffunc=frag("""        (block entry
          (branch_if /*^*/r3 entry entry)))""")))
bad("return_value_availability", "definite-assignment", "register r1 is read",
    "a returned register is a read",
    module(ffuncs="\n" + frag("        (block entry (return /*^*/r1)))", fid="h", name="h", ret="Int")))

# ---------------------------------------------------------------- storage (6, 6.1, 6.2)
bad("store_uniform", "storage", "uniform storage is read-only", "uniforms are read-only",
    module(fbody="\n          (store /*^*/(uniform tint) r0)"))
bad("store_uniform_member", "storage", "inherits its root's permissions", "a field of a uniform remains read-only",
    module(fbody="\n          (store (member_ref /*^*/(uniform cell) \"color\") r0)"))
bad("store_uniform_element", "storage", "uniform storage is read-only", "an element of a uniform remains read-only",
    module(fbody="\n          (copy r2 (float 1.0))\n          (store (index_ref /*^*/(uniform weights) (int 1)) r2)"))
bad("store_stage_input", "storage", "stage input \"position_in\" is read-only", "stage inputs are read-only",
    module(vregs=" (register r2 Vec3)", vbody="\n          (construct r2 (float 0.0))\n          (store /*^*/(stage position_in) r2)"))
ok("writable_storage", "outputs, locals and parameters are writable; uniforms and inputs readable",
   module(ffuncs="\n" + frag("""        (block entry
          (load r2 (parameter p))
          (add r2 r2 (float 1.0))
          (store (parameter p) r2)
          (store (local r2) r2)
          (load r0 (uniform tint))
          (load r2 (index_ref (uniform weights) (int 3)))
          (load r1 (member_ref (uniform cell) "weight"))
          (return r2)))""", fid="h", name="h", ret="Float", params=" (parameter p Float)")))
bad("store_type_mismatch", "storage", "store writes a value of type int to storage of type vector float 4",
    "stored values match the stored type exactly",
    module(fbody="\n          (copy r1 (int 1))\n          (store (stage color) /*^*/r1)"))
bad("load_type_mismatch", "storage", "load reads vector float 4 into register r2",
    "a load's result register has the stored type",
    module(fbody="\n          /*^*/(load r2 (uniform tint))"))
bad("index_ref_float_operand", "storage", "needs an int register or constant",
    "an index selector needs an integer operand",
    module(fbody="\n          (copy r2 (float 0.0))\n          (load r2 (index_ref (uniform weights) /*^*/r2))"))
bad("index_ref_out_of_bounds", "storage", "literal index 4 is out of bounds",
    "literal indices are in bounds",
    module(fbody="\n          (load r2 (index_ref (uniform weights) /*^*/(int 4)))"))
bad("index_ref_negative", "storage", "literal index -1 is out of bounds",
    "literal indices are nonnegative",
    module(fbody="\n          (load r2 (index_ref (uniform weights) /*^*/(int -1)))"))
bad("nested_index_out_of_bounds", "storage", "literal index 3 is out of bounds",
    "literal indices are checked at every selection level",
    module(types='\n    (type Row array Float 3)\n    (type Grid array Row 2)', uniforms='\n    (array grid "grid" Row 2)',
           fbody="\n          (load r2 (index_ref (index_ref (uniform grid) (int 1)) /*^*/(int 3)))"))
NESTED = frag("""        (block entry
          (construct r0 (float 1.0) (float 0.0) (float 0.0) (float 1.0))
          (construct r9 r0 (int 1))
          (construct r10 r9 r9)
          (copy r1 (int 1))
          (construct r0 (float 0.0) (float 1.0) (float 0.0) (float 1.0))
          (store (member_ref (index_ref (local r10) r1) "color") r0)
          (load r0 (member_ref (index_ref (local r10) r1) "color"))
          (store (stage color) r0)
          (return)))""", regs=" (register r9 Cell) (register r10 Cells)")
ok("nested_storage", "spec 10.3 nested aggregate storage: arrays of records, nested paths", module(ffunc=NESTED))
bad("selector_availability", "definite-assignment", "register r1 is read",
    "dynamic index registers are definitely assigned at each use",
    module(ffunc=NESTED.replace("          (copy r1 (int 1))\n", "").replace('(store (member_ref (index_ref (local r10) r1) "color") r0)', '(store (member_ref (index_ref (local r10) /*^*/r1) "color") r0)')))
bad("partial_write_initialization", "definite-assignment", "must be wholly assigned",
    "a partial store never establishes whole-register assignment",
    module(ffunc=NESTED.replace("          (construct r10 r9 r9)\n", "").replace('(store (member_ref (index_ref (local r10) r1) "color") r0)', '(store (member_ref (index_ref /*^*/(local r10) r1) "color") r0)')))
bad("whole_local_load", "definite-assignment", "must be wholly assigned",
    "loading a local needs it assigned",
    module(fregs=" (register r9 Cell)", fbody="\n          (load r9 /*^*/(local r9))"))
ok("whole_local_store_assigns", "a whole-local store assigns the register",
   module(fregs=" (register r9 Vec4)", fbody="\n          (store (local r9) r0)\n          (copy r0 r9)"))

# ---------------------------------------------------------------- outputs (6.3)
bad("output_unassigned", "output", "output \"clip\" is not fully assigned",
    "every declared output is fully assigned on each normal entry return",
    module(vfunc="""      (function vmain "vmain" Void
        (parameters)
        (registers)
        (block entry
          /*^*/(return)))"""))
bad("output_unassigned_extra", "output", "output \"extra\" is not fully assigned",
    "unused, unlinked outputs must be assigned too",
    module(fiface='\n      (out extra "extra" Vec4 1 none)', ffunc=frag("""        (block entry
""" + STORE_COLOR + """
          /*^*/(return)))""")))
REC_OUT = '\n      (out data "data" Cell 4 none)'
bad("output_record_partial", "output", "output \"data\" is not fully assigned",
    "a member store establishes only its field",
    module(viface=REC_OUT, vfunc="""      (function vmain "vmain" Void
        (parameters)
        (registers (register r1 Vec4))
        (block entry
          (construct r1 (float 1.0))
          (store (stage clip) r1)
          (store (member_ref (stage data) "color") r1)
          /*^*/(return)))"""))
ok("output_record_fields", "member stores establish leaves without their siblings",
   module(viface=REC_OUT, vfunc="""      (function vmain "vmain" Void
        (parameters)
        (registers (register r1 Vec4))
        (block entry
          (construct r1 (float 1.0))
          (store (stage clip) r1)
          (store (member_ref (stage data) "weight") (int 3))
          (store (member_ref (stage data) "color") r1)
          (return)))"""))
ARR_OUT = '\n      (out values "values" Floats 4 none)'
ok("output_constant_indices", "constant-index stores establish their elements",
   module(viface=ARR_OUT, vbody="\n          (store (index_ref (stage values) (int 0)) (float 0.0))\n          (store (index_ref (stage values) (int 2)) (float 2.0))\n          (store (index_ref (stage values) (int 1)) (float 1.0))"))
bad("output_dynamic_store", "output", "output \"values\" is not fully assigned",
    "dynamic-index stores establish no leaf, even in a one-element array",
    module(types='\n    (type One array Float 1)', viface='\n      (out values "values" One 4 none)', vregs=" (register r2 Int)",
           vfunc=None, vbody="\n          (copy r2 (int 0))\n          (store (index_ref (stage values) r2) (float 0.0))").replace("          (return)))\n    (functions", "XX").replace(
               "(store (index_ref (stage values) r2) (float 0.0))\n          (return)", "(store (index_ref (stage values) r2) (float 0.0))\n          /*^*/(return)"))
bad("output_dynamic_read", "output", "output \"values\" is read before it is definitely assigned",
    "a dynamic-index read needs every element it may select",
    module(viface=ARR_OUT, vregs=" (register r2 Int) (register r3 Float)",
           vbody="\n          (store (index_ref (stage values) (int 0)) (float 0.0))\n          (store (index_ref (stage values) (int 1)) (float 0.0))\n          (copy r2 (int 0))\n          (load r3 /*^*/(index_ref (stage values) r2))"))
ok("output_dynamic_read_after_whole", "a dynamic-index read after a whole store",
   module(viface=ARR_OUT, vregs=" (register r2 Int) (register r3 Float) (register r4 Floats)",
          vbody="\n          (construct r4 (float 0.0) (float 1.0) (float 2.0))\n          (store (stage values) r4)\n          (copy r2 (int 0))\n          (load r3 (index_ref (stage values) r2))\n          (store (index_ref (stage values) r2) r3)"))
bad("output_read_before_write", "output", "output \"color\" is read before",
    "no output is initially assigned",
    module(ffunc=frag("""        (block entry
          (load r0 /*^*/(stage color))
          (store (stage color) r0)
          (return)))""")))
HELPER_WRITES = "\n" + frag("""        (block entry
""" + STORE_COLOR + """
          (return)))""", fid="paint", name="paint")
ok("helper_guarantees", "a helper's writes on every normal return reach the caller",
   module(ffuncs=HELPER_WRITES, ffunc=frag("""        (block entry
          (call void paint)
          (return)))""")))
bad("helper_conditional_write", "output", "output \"color\" is not fully assigned",
    "a helper that writes on only some returns guarantees nothing",
    module(ffuncs="\n" + frag("""        (block entry
          (branch_if (bool true) write skip))
        (block write
""" + STORE_COLOR + """
          (return))
        (block skip
          (return)))""", fid="maybe", name="maybe"), ffunc=frag("""        (block entry
          (call void maybe)
          /*^*/(return)))""")))
ok("helper_discard_paths", "discarded paths contribute no guarantees but do not weaken them",
   module(ffuncs="\n" + frag("""        (block entry
          (branch_if (bool true) write kill))
        (block write
""" + STORE_COLOR + """
          (return))
        (block kill
          (discard)))""", fid="maybe", name="maybe"), ffunc=frag("""        (block entry
          (call void maybe)
          (return)))""")))
HELPER_READS = "\n" + frag("""        (block entry
          (load r0 (stage color))
          (return)))""", fid="peek", name="peek")
bad("helper_read_prerequisite", "output", "the call to \"peek\" reads output \"color\"",
    "a caller satisfies a helper's read prerequisites",
    module(ffuncs=HELPER_READS, ffunc=frag("""        (block entry
          /*^*/(call void peek)
""" + STORE_COLOR + """
          (return)))""")))
ok("helper_read_satisfied", "prerequisites satisfied before the call",
   module(ffuncs=HELPER_READS, ffunc=frag("""        (block entry
""" + STORE_COLOR + """
          (call void peek)
          (return)))""")))
ok("helper_without_return_cuts", "a helper with no normal return cuts the caller's continuation",
   module(ffuncs="\n" + frag("        (block entry (discard)))", fid="kill", name="kill"), ffunc=frag("""        (block entry
          (call void kill)
          (add r1 r1 (int 1))
          (return)))""")))
ok("helper_infinite_loop_cuts", "termination is not proved: an endless helper has no normal return",
   module(vfuncs="\n      (function spin \"spin\" Void (parameters) (registers) (block b (branch b)))",
          vfunc="""      (function vmain "vmain" Void
        (parameters)
        (registers)
        (block entry
          (call void spin)
          (return)))"""))
bad("direct_recursion_unused", "output", "recursive call \"r\" -> \"r\"",
    "direct recursion is rejected even in unused functions",
    module(ffuncs="\n      (function r \"r\" Void (parameters) (registers) (block b /*^*/(call void r) (return)))"))
bad("indirect_recursion_unreachable", "output", "recursive call",
    "indirect recursion is rejected even in unreachable blocks",
    module(ffuncs="\n      (function a \"a\" Void (parameters) (registers) (block b (return)) (block dead (call void b) (return)))\n      (function b \"b\" Void (parameters) (registers) (block b /*^*/(call void a) (return)))"))

# ---------------------------------------------------------------- instructions (7)
ok("operand_table", "every row of the normative operand table of 7.1",
   module(fregs="""
          (register m2 Mat2) (register m23 Mat23) (register m32 Mat32) (register m3 Mat2)
          (register v2 Vec2) (register v3 Vec3) (register iv IVec2) (register b Bool)""".replace("m2 ", "r10 ").replace("m23 ", "r11 ").replace("m32 ", "r12 ").replace("m3 ", "r13 ").replace("v2 ", "r14 ").replace("v3 ", "r15 ").replace("iv ", "r16 ").replace("register b ", "register r17 "),
          fbody="""
          (copy r1 (int 7))
          (add r1 r1 (int 1))
          (subtract r1 r1 (int 1))
          (multiply r1 r1 (int 2))
          (divide r1 r1 (int 2))
          (divide r1 r1 r1)
          (copy r2 (float 2.0))
          (divide r2 r2 (float 0.0))
          (construct r14 (float 1.0) (float 2.0))
          (construct r16 (int 1) (int 2))
          (add r16 r16 r16)
          (divide r16 r16 r16)
          (multiply r14 r14 r14)
          (construct r10 (float 1.0))
          (construct r11 (float 1.0))
          (construct r12 (float 1.0))
          (add r10 r10 r10)
          (subtract r11 r11 r11)
          (divide r12 r12 r12)
          (multiply r13 r10 r10)
          (multiply r10 r11 r12)
          (multiply r14 r11 r15_placeholder)
          (multiply r14 r14 r2)
          (divide r11 r11 r2)
          (multiply r14 r2 r14)
          (multiply r12 r2 r12)
          (equal r17 r17_placeholder)
          (not_equal r17 r1 r1)
          (equal r17 r2 r2)
          (less r17 r1 r1)
          (less_equal r17 r2 r2)
          (greater r17 r1 r1)
          (greater_equal r17 r2 r2)""".replace("(multiply r14 r11 r15_placeholder)", "(construct r15 (float 1.0))\n          (multiply r14 r11 r15)").replace("(equal r17 r17_placeholder)", "(copy r17 (bool true))\n          (equal r17 r17 r17)")))
def binop(name, line, msg, rule="instruction"):
    bad(name, rule, msg, "operand combinations outside the table of 7.1 are rejected",
        module(fregs="\n          (register r10 Mat2) (register r11 Mat23) (register r12 Vec2) (register r13 IVec2) (register r14 BVec2)",
               fbody="""
          (copy r1 (int 1))
          (copy r2 (float 1.0))
          (copy r3 (bool true))
          (construct r10 (float 1.0))
          (construct r11 (float 1.0))
          (construct r12 (float 1.0))
          (construct r13 (int 1))
          (construct r14 (bool true))
          /*^*/""" + line))
binop("op_int_plus_float", "(add r2 r1 r2)", "`add` is not defined for operands int and float")
binop("op_vector_times_matrix", "(multiply r12 r12 r10)", "`multiply` is not defined for operands vector float 2 and matrix 2 2")
binop("op_int_vector_times_scalar", "(multiply r13 r13 r1)", "is not defined for operands vector int 2 and int")
binop("op_bool_add", "(add r3 r3 r3)", "`add` is not defined for operands bool and bool")
binop("op_bool_vector_add", "(add r14 r14 r14)", "not defined for operands vector bool 2")
binop("op_matrix_shapes", "(add r10 r10 r11)", "not defined for operands matrix 2 2 and matrix 2 3")
binop("op_matrix_inner_dimension", "(multiply r11 r11 r11)", "not defined for operands matrix 2 3 and matrix 2 3")
binop("op_scalar_divided_by_vector", "(divide r12 r2 r12)", "`divide` is not defined for operands float and vector float 2")
binop("op_vector_comparison", "(equal r3 r12 r12)", "`equal` is not defined for operands vector float 2")
binop("op_ordered_bool", "(less r3 r3 r3)", "`less` is not defined for operands bool and bool")
binop("op_result_type", "(add r2 r1 r1)", "`add` produces int, but the result register r2 has type float")
binop("op_matrix_product_result", "(multiply r10 r10 r11)", "`multiply` produces matrix 2 3")
binop("op_matrix_vector_result", "(multiply r2 r10 r12)", "`multiply` produces vector float 2")
bad("divide_by_constant_zero", "instruction", "integer division by the constant zero",
    "statically explicit constant zero divisors are rejected",
    module(fbody="\n          (copy r1 (int 1))\n          (divide r1 r1 /*^*/(int 0))"))
bad("divide_min_by_minus_one", "instruction", "minimum integer by -1",
    "constant minimum-integer / -1 is rejected",
    module(fbody="\n          /*^*/(divide r1 (int -2147483648) (int -1))"))
ok("constructors", "the constructor rules of 7.2",
   module(types='\n    (type Empty record "Empty")\n    (type Mat3 matrix 3 3)',
          fregs="\n          (register r10 Vec2) (register r11 Vec3) (register r12 Mat2) (register r13 Mat23) (register r14 Cell) (register r15 Cells) (register r16 Empty) (register r17 BVec2) (register r18 IVec2) (register r19 Mat3)",
          fbody="""
          (construct r2 (int 3))
          (construct r2 (float 3.0))
          (construct r1 (int 3))
          (construct r3 (bool false))
          (construct r10 (float 1.0))
          (construct r10 (int 1))
          (construct r11 r10 (int 2))
          (construct r0 r10 r10)
          (construct r0 (float 1.0) r11)
          (construct r0 r0)
          (construct r17 (bool true))
          (construct r17 (bool true) (bool false))
          (construct r18 (int 1) (int 2))
          (construct r12 (float 2.0))
          (construct r12 (int 2))
          (construct r12 r10 r10)
          (construct r12 r0)
          (construct r13 r10 (float 1.0) (int 2) r10)
          (construct r19 r11 r11 r11)
          (construct r14 r0 (int 1))
          (construct r15 r14 r14)
          (construct r16)"""))
def ctor(name, regs, line, msg):
    bad(name, "instruction", msg, "constructor operands outside 7.2 are rejected",
        module(types='\n    (type Empty record "Empty")', fregs="\n          " + regs,
               fbody="\n          (copy r1 (int 1))\n          (copy r2 (float 1.0))\n          " + (line if "/*^*/" in line else "/*^*/" + line)))
ctor("ctor_vector_too_few", "(register r10 Vec3)", "(construct r10 r2 r2)", "needs components totaling exactly 3")
ctor("ctor_vector_excess", "(register r10 Vec3) (register r11 Vec2)", "(construct r11 (float 1.0))\n          /*^*/(construct r10 r11 r11)", "needs components totaling exactly 3")
ctor("ctor_int_vector_operand", "(register r10 IVec2) (register r11 Vec2)", "(construct r10 (int 1))\n          /*^*/(construct r11 r10)", "not vector int 2")
ctor("ctor_matrix_operand", "(register r10 Mat2) (register r11 Mat2)", "(construct r10 (float 1.0))\n          /*^*/(construct r11 r10)", "no matrix operands")
ctor("ctor_bool_vector_from_int", "(register r10 BVec2)", "(construct r10 (int 1))", "cannot be constructed from a int scalar")
ctor("ctor_float_to_int", "", "(construct r1 r2)", "a int scalar is constructed from one int operand")
ctor("ctor_int_to_bool", "", "(construct r3 r1)", "a bool scalar is constructed from one bool operand")
ctor("ctor_scalar_two_operands", "", "(construct r2 r2 r2)", "a float scalar is constructed from one float operand")
ctor("ctor_sampler", "(register r10 Sampler)", "(construct r10)", "samplers cannot be constructed")
ctor("ctor_array_count", "(register r10 Floats)", "(construct r10 r2 r2)", "constructed from exactly 3 operands, not 2")
ctor("ctor_array_element", "(register r10 Floats)", "(construct r10 r2 /*^*/r1 r2)", "array element operand 1 has type int")
ctor("ctor_record_order", "(register r10 Cell)", "(construct r0 (float 1.0))\n          (construct r10 /*^*/r1 r0)", "operand 0 for field \"color\" has type int")
ctor("ctor_record_count", "(register r10 Empty)", "(construct r10 r1)", "one operand per field (0), not 1")
ctor("ctor_matrix_total", "(register r10 Mat23)", "(construct r10 r2 r2 r2 r2 r2)", "needs components totaling exactly 6")
CALLEE = "\n" + frag("        (block entry (return (float 1.0))))", fid="one", name="one", ret="Float", params=" (parameter a Int) (parameter b Vec4)")
VOIDF = "\n      (function nothing \"nothing\" Void (parameters) (registers) (block b (return)))"
def call(name, line, msg):
    bad(name, "instruction", msg, "calls match their callee's signature (7.3)",
        module(ffuncs=CALLEE + VOIDF, fbody="\n          (copy r1 (int 1))\n          " + line))
ok("calls", "calls, void calls and texture sampling",
   module(ffuncs=CALLEE + VOIDF, fregs=" (register r10 Sampler) (register r11 Vec2)", fbody="""
          (copy r1 (int 1))
          (call r2 one r1 r0)
          (call void nothing)
          (load r10 (uniform image))
          (construct r11 (float 0.5))
          (texture r0 r10 r11)"""))
call("call_argument_count", "/*^*/(call r2 one r1)", "passes 1 arguments, but it has 2 parameters")
call("call_argument_type", "(call r2 one /*^*/r2 r0)", "argument 0 of the call to \"one\" has type float")
call("call_void_with_result", "/*^*/(call r2 nothing)", "returns void, so the call cannot assign")
call("call_value_without_result", "/*^*/(call void one r1 r0)", "needs a destination register")
call("call_result_type", "/*^*/(call r1 one r1 r0)", "but the destination register r1 has type int")
call("texture_result_type", "/*^*/(texture r2 r0 r0)", "texture produces vector float 4")
call("texture_sampler_operand", "(texture r0 /*^*/r0 r0)", "texture needs a sampler2D operand")
bad("texture_coordinates", "instruction", "texture coordinates must be a vector float 2",
    "texture takes sampler2D and vec2",
    module(fregs=" (register r10 Sampler)", fbody="\n          (load r10 (uniform image))\n          (texture r0 r10 /*^*/r0)"))
ok("extraction", "swizzle, member and index extraction (7.4)",
   module(fregs=" (register r10 Vec2) (register r11 Cell) (register r12 Floats)", fbody="""
          (swizzle r2 r0 "w")
          (swizzle r10 r0 "xx")
          (swizzle r0 r0 "wzyx")
          (construct r11 r0 (int 1))
          (member r1 r11 "weight")
          (construct r12 (float 1.0) (float 2.0) (float 3.0))
          (index r2 r12 (int 2))
          (copy r1 (int 9))
          (index r2 r12 r1)"""))
def ext(name, line, msg, regs=" (register r10 Vec2) (register r11 Cell) (register r12 Floats)"):
    bad(name, "instruction", msg, "extraction rules of 7.4",
        module(fregs=regs, fbody="""
          (construct r10 (float 1.0))
          (construct r11 r0 (int 1))
          (construct r12 (float 1.0) (float 2.0) (float 3.0))
          """ + line))
ext("swizzle_component", "/*^*/(swizzle r2 r10 \"z\")", "swizzle selector `z` is not valid for a 2-component vector")
ext("swizzle_result", "/*^*/(swizzle r10 r0 \"xyz\")", "swizzle produces a vector of 3 float components")
ext("swizzle_scalar_source", "/*^*/(swizzle r2 r2 \"x\")", "swizzle needs a vector source")
ext("member_unknown_field", "/*^*/(member r1 r11 \"height\")", "record \"Cell\" has no field \"height\"")
ext("member_non_record", "/*^*/(member r2 r0 \"x\")", "member extraction needs a record value")
ext("member_result", "/*^*/(member r2 r11 \"weight\")", "field \"weight\" has type int")
ext("index_out_of_bounds", "(index r2 r12 /*^*/(int 3))", "literal index 3 is out of bounds")
ext("index_float_operand", "(index r2 r12 /*^*/(float 1.0))", "an index must be an int scalar")
ext("index_non_array", "/*^*/(index r2 r0 (int 0))", "index extraction needs an array value")
bad("copy_type", "instruction", "copy needs a source of exactly the result's type",
    "copy has exactly the result type; no implicit int-to-float",
    module(fbody="\n          /*^*/(copy r2 (int 1))"))

# ---------------------------------------------------------------- control flow (8)
bad("void_return_value", "control-flow", "returns void, so its return takes no value",
    "void returns have no value",
    module(ffuncs="\n      (function h \"h\" Void (parameters) (registers) (block b (return /*^*/(int 1))))"))
bad("missing_return_value", "control-flow", "so its return needs a value",
    "non-void returns have a value",
    module(ffuncs="\n      (function h \"h\" Int (parameters) (registers) (block b /*^*/(return)))"))
bad("return_value_type", "control-flow", "return value has type float",
    "non-void returns have exactly the return type",
    module(ffuncs="\n      (function h \"h\" Int (parameters) (registers) (block b (return /*^*/(float 1.0))))"))
bad("discard_in_vertex", "control-flow", "discard is only allowed in the fragment stage",
    "discard is fragment-only",
    module(vfuncs="\n      (function h \"h\" Void (parameters) (registers) (block b /*^*/(discard)))"))
ok("discard_in_non_void_helper", "discard needs no value, whatever the return type",
   module(ffuncs="\n      (function h \"h\" Int (parameters) (registers) (block b (discard)))"))
bad("branch_condition_type", "control-flow", "a branch condition must be a bool value",
    "a conditional branch tests a bool",
    module(ffuncs="\n      (function h \"h\" Void (parameters) (registers) (block b (branch_if /*^*/(int 1) b b)))"))

# ---------------------------------------------------------------- more coverage
bad("call_argument_availability", "definite-assignment", "register r2 is read",
    "call arguments are reads",
    module(ffuncs="\n" + frag("        (block entry (return r2)))", fid="id", name="id", ret="Float", params=" (parameter a Float)").replace("(return r2)", "(load r2 (parameter a)) (return r2)"),
           fbody="\n          (call r2 id /*^*/r2)"))
bad("output_loop_first_iteration", "output", "output \"color\" is read before",
    "an output written only later in a loop is unassigned on the first iteration",
    module(ffunc=frag("""        (block entry
          (copy r1 (int 0))
          (branch head))
        (block head
          (load r0 /*^*/(stage color))
          (construct r0 (float 1.0))
          (store (stage color) r0)
          (add r1 r1 (int 1))
          (less r3 r1 (int 4))
          (branch_if r3 head exit))
        (block exit
          (return)))""")))
ok("output_helper_in_loop", "a helper called in a loop establishes its guarantees after the first call",
   module(ffuncs=HELPER_WRITES, ffunc=frag("""        (block entry
          (copy r1 (int 0))
          (branch head))
        (block head
          (call void paint)
          (load r0 (stage color))
          (add r1 r1 (int 1))
          (less r3 r1 (int 4))
          (branch_if r3 head exit))
        (block exit
          (return)))""")))
ok("derived_parameter_store", "parameter sub-storage is writable and needs no prior assignment",
   module(ffuncs="\n" + frag("""        (block entry
          (store (member_ref (parameter c) "weight") (int 2))
          (load r1 (member_ref (parameter c) "weight"))
          (return r1)))""", fid="h", name="h", ret="Int", params=" (parameter c Cell)")))
ok("texture_in_vertex", "texture sampling is available in both stages",
   module(vregs=" (register r2 Sampler) (register r3 Vec2)", vbody="\n          (load r2 (uniform image))\n          (construct r3 (float 0.5))\n          (texture r1 r2 r3)"))
bad("store_stage_input_member", "storage", "is read-only (a derived path inherits its root's permissions)",
    "a field of a stage input remains read-only",
    module(viface='\n      (in cell_in "cell_in" Cell 1 none)', vbody="\n          (store (member_ref /*^*/(stage cell_in) \"weight\") (int 1))"))
bad("fragment_input_used_only_in_dead_code", "interface", "has no matching vertex output",
    "linkage applies to every ordinary fragment input, used or not",
    module(fiface='\n      /*^*/(in unused "unused" Float -1 none)'))
bad("matrix_vector_dimension", "instruction", "`multiply` is not defined for operands matrix 2 3 and vector float 2",
    "matrix-times-vector needs as many components as the matrix has columns",
    module(fregs=" (register r10 Mat23) (register r11 Vec2)", fbody="\n          (construct r10 (float 1.0))\n          (construct r11 (float 1.0))\n          /*^*/(multiply r11 r10 r11)"))

for kind, name, rule, msg, desc, text in cases:
    header = f"// {desc}\n"
    if kind == "valid":
        header += "// expect: ok\n"
    else:
        header += f"// rule: {rule}\n// error: {msg}\n"
    with open(f"{OUT}/{kind}/{name}.vpl", "w") as f:
        f.write(header + text)
print(len(cases), "cases")
