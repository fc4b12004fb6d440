"""Bad topologies, word for word: `check_forest` on generated links and
`read_graph` on edge-list files name the file, the line and what is wrong
(spec/formats.md: bad input is one clear line, exit 2)."""

from __future__ import annotations

import pytest

from subsum.impl.network.topology import MAX_LABEL, DisconnectedTopology, _component_text, TopologyError, check_forest, overlay_links, read_graph


@pytest.mark.parametrize("n, links, message", [
    (3, [(0, 3)], "link (0, 3) names a broker outside 0 .. 2"),
    (3, [(3, 0)], "link (3, 0) names a broker outside 0 .. 2"),
    (3, [(-1, 0)], "link (-1, 0) names a broker outside 0 .. 2"),
    (3, [(0, -1)], "link (0, -1) names a broker outside 0 .. 2"),
    (3, [(1, 1)], "link (1, 1) is a self-loop"),
    (3, [(0, 1), (1, 0)], "link (1, 0) is given twice"),
    (3, [(0, 1), (1, 2), (2, 0)], "link (2, 0) closes a cycle; the overlay must be a forest"),
])
def test_check_forest_says_which_link_is_wrong(n, links, message):
    with pytest.raises(TopologyError) as caught:
        check_forest(n, links, where="links.txt")
    assert str(caught.value) == f"links.txt: {message}"


def test_check_forest_names_the_topology_when_no_file_is_given():
    with pytest.raises(TopologyError) as caught:
        check_forest(2, [(0, 0)])
    assert str(caught.value) == "topology: link (0, 0) is a self-loop"


def test_check_forest_takes_a_forest_of_every_broker():
    check_forest(4, [(0, 1), (2, 3)])  # two trees: no error
    check_forest(1, [])


@pytest.mark.parametrize("text, message", [
    ("0 1\n2\n", ":2: expected two node names, got '2'"),
    ("a a\n", ":1: link a a is a self-loop"),
    ("a b\nb\tc \x07\nc a\n", None),  # the bell is a third column: ignored
    ("a b\nb c\x07\n", ":2: node name 'c\\x07' holds a control character or is longer than 200 characters"),
    (f"a {'x' * (MAX_LABEL + 1)}\n", f":1: node name '{'x' * 40}' holds a control character or is longer than 200 characters"),
    ("# only a comment\n\n", ": the file holds no links"),
    ("a # b # c\n", ":1: expected two node names, got 'a'"),  # everything from the first mark on is a comment
])
def test_read_graph_says_which_line_is_wrong(tmp_path, text, message):
    path = tmp_path / "graph.txt"
    path.write_text(text, encoding="utf-8")
    if message is None:
        assert read_graph(path) == (["a", "b", "c"], [(0, 1), (0, 2), (1, 2)])
        return
    with pytest.raises(TopologyError) as caught:
        read_graph(path)
    assert str(caught.value) == f"{path}{message}"


def test_read_graph_reads_comments_columns_and_names(tmp_path):
    path = tmp_path / "graph.txt"
    name = "y" * MAX_LABEL  # the longest name allowed
    path.write_text(f"10 2 # a comment # with a second mark\n2 1 weight=3 extra\n# 5 6\n1 {name}\n", encoding="utf-8")
    labels, links = read_graph(path)
    assert labels == ["10", "2", "1", name]  # not every name an integer: order of appearance
    assert links == [(0, 1), (1, 2), (2, 3)]
    path.write_text("10 2\n2 1 7\n", encoding="utf-8")
    assert read_graph(path) == (["1", "2", "10"], [(0, 1), (1, 2)])  # integers: numeric order, not text order


def test_read_graph_refuses_more_nodes_than_a_topology_holds(tmp_path, monkeypatch):
    from subsum.impl.network import topology

    monkeypatch.setattr(topology, "MAX_NODES", 4)
    path = tmp_path / "graph.txt"
    path.write_text("0 1\n1 2\n2 3\n", encoding="utf-8")
    assert len(read_graph(path)[0]) == 4  # exactly the limit
    path.write_text("0 1\n1 2\n2 3\n3 4\n", encoding="utf-8")
    with pytest.raises(TopologyError) as caught:
        read_graph(path)
    assert str(caught.value) == f"{path}: the graph has 5 nodes; a topology holds at most 4 brokers"


def test_a_disconnected_file_names_its_components(tmp_path):
    path = tmp_path / "graph.txt"
    path.write_text("".join(f"{2 * k} {2 * k + 1}\n" for k in range(7)) + "a b\nb c\nc d\nd e\ne f\nf g\ng h\n", encoding="utf-8")
    with pytest.raises(DisconnectedTopology) as caught:
        overlay_links(str(path), 0, 0)
    assert str(caught.value) == (f"{path}: the links form 8 components, {{0 1}} (2 brokers), {{2 3}} (2 brokers), {{4 5}} (2 brokers), "
                                 "{6 7} (2 brokers), {8 9} (2 brokers) and 3 more; the overlay must be connected, or run as a forest")
    assert caught.value.components[-1] == ["a", "b", "c", "d", "e", "f", "g", "h"]
    assert str(caught.value.with_remedy("use --forest")) == str(caught.value).replace("the overlay must be connected, or run as a forest",
                                                                                      "use --forest")
    assert overlay_links(str(path), 0, 0, forest=True)[0] == 22


def test_components_are_named_with_their_size_and_at_most_six_brokers(tmp_path):
    path = tmp_path / "graph.txt"
    path.write_text("a b\nc d\nd e\ne f\nf g\ng h\ni j\nj k\nk l\nl m\nm n\nn o\no p\nq r\ns t\n", encoding="utf-8")
    path.write_text(path.read_text() + "lone lone2\n", encoding="utf-8")
    with pytest.raises(DisconnectedTopology) as caught:
        overlay_links(str(path), 0, 0)
    assert str(caught.value) == (f"{path}: the links form 6 components, {{a b}} (2 brokers), {{c d e f g h}} (6 brokers), "
                                 "{i j k l m n …} (8 brokers), {q r} (2 brokers), {s t} (2 brokers) and 1 more; "
                                 "the overlay must be connected, or run as a forest")
    path.write_text("a b\nc d\ne f\ng h\ni j\n", encoding="utf-8")  # exactly as many as are shown
    with pytest.raises(DisconnectedTopology) as caught:
        overlay_links(str(path), 0, 0)
    assert str(caught.value).endswith("{i j} (2 brokers); the overlay must be connected, or run as a forest")
    assert _component_text(["solo"]) == "{solo} (1 broker)"  # a forest's lone broker (no edge list holds one)
