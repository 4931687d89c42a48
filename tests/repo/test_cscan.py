"""The C scanner behind the function-length and circle checks finds
definitions and calls, and nothing in macros, comments, strings,
prototypes, types or data tables."""
import callgraph
import cscan

SAMPLE = r'''
#define LOOP(x) do { helper(x); } while (0)
#define BIG \
    { one(); two(); }
static int helper(int x);              /* a prototype: not a definition */
struct point { int x, y; };
static const struct point table[] = {
    { 1, 2 },
    { 3, 4 },
};
typedef struct { int a; } Anon;
/* comment: fake(1) { } */
static int helper(int x)
{
    const char *s = "not_a_call(  { ";
    char c = '{';
    // line comment: other(2);
    return x + (int)sizeof(table) + s[0] + c;
}

int api(int y)
{
    LOOP(y);
    if (y) {
        y = helper(y);
    }
    return obj.method(y) + ptr->fn(y) + external(y);
}
'''


def test_definitions_only():
    fns = cscan.functions("sample.c", SAMPLE)
    assert [f.name for f in fns] == ["helper", "api"]
    helper, api = fns
    lines = SAMPLE.split("\n")
    assert lines[helper.start - 1].startswith("static int helper(int x)")
    assert lines[helper.end - 1] == "}"
    assert helper.length == 7


def test_calls_skip_keywords_members_literals_and_comments():
    helper, api = cscan.functions("sample.c", SAMPLE)
    assert [c for c, _ in helper.calls] == []
    assert [c for c, _ in api.calls] == ["LOOP", "helper", "external"]


def test_a_circle_is_found(tmp_path):
    d = tmp_path / "hw" / "ide" / "ncq-model"
    d.mkdir(parents=True)
    (d / "a.c").write_text("void a1(void)\n{\n    b1();\n}\n")
    (d / "b.c").write_text("void b1(void)\n{\n    c1();\n}\n"
                           "void b2(void)\n{\n}\n")
    (d / "c.c").write_text("void c1(void)\n{\n    /* a1(); */\n}\n")
    edges = callgraph.file_graph(str(tmp_path))
    assert callgraph.cycles(edges) == []
    (d / "c.c").write_text("void c1(void)\n{\n    a1();\n}\n")
    edges = callgraph.file_graph(str(tmp_path))
    [(comp, path)] = callgraph.cycles(edges)
    assert [p.rsplit("/", 1)[1] for p in path] == ["a.c", "b.c", "c.c",
                                                   "a.c"]
