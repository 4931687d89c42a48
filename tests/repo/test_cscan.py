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


def test_a_table_or_a_callback_is_a_call(tmp_path):
    """A data table naming another file's function, or a function handing
    it on as a callback, is a way into that file: a circle through it is
    found.  A local variable that shares a name with another file's static
    function is not."""
    d = tmp_path / "hw" / "ide" / "ncq-disk"
    d.mkdir(parents=True)
    (d / "log.c").write_text("static const Row rows[] = {\n"
                             "    { 0x30, id_log },\n};\n")
    (d / "id.c").write_text("void id_log(void)\n{\n}\n"
                            "void identify(void)\n{\n"
                            "    int secs = 0;\n    use(secs);\n}\n")
    (d / "sim.c").write_text("static double secs(void)\n{\n"
                             "    return 0;\n}\n")
    folder = "hw/ide/ncq-disk"
    edges = callgraph.file_graph(str(tmp_path), folder)
    assert callgraph.cycles(edges) == []
    assert edges[f"{folder}/log.c"][f"{folder}/id.c"] == [
        ("rows[]", "id_log", 2, "names")]
    assert f"{folder}/sim.c" not in edges[f"{folder}/id.c"]
    (d / "id.c").write_text("void id_log(void)\n{\n}\n"
                            "void identify(void)\n{\n"
                            "    timer_new(log_done);\n}\n")
    (d / "log.c").write_text("static const Row rows[] = {\n"
                             "    { 0x30, id_log },\n};\n"
                             "void log_done(void)\n{\n}\n")
    edges = callgraph.file_graph(str(tmp_path), folder)
    [(comp, path)] = callgraph.cycles(edges)
    assert [p.rsplit("/", 1)[1] for p in path] == ["id.c", "log.c", "id.c"]
    assert edges[f"{folder}/id.c"][f"{folder}/log.c"] == [
        ("identify", "log_done", 6, "names")]
