"""Mermaid and Graphviz DOT renderings of a `kueueplan.workflow.graph.Topology`."""

from __future__ import annotations

from kueueplan.report.escape import mermaid_text, one_line
from kueueplan.workflow.graph import Edge, Group, Node, Topology

_MERMAID_SHAPES = {
    "ResourceFlavor": ('{{"', '"}}'),
    "ClusterQueue": ('["', '"]'),
    "LocalQueue": ('(["', '"])'),
    "Namespace": ('[/"', '"/]'),
    "AdmissionCheck": ('{"', '"}'),
    "MultiKueueConfig": ('[["', '"]]'),
    "ProvisioningRequestConfig": ('[["', '"]]'),
    "MultiKueueCluster": ('[("', '")]'),
    "Topology": ('>"', '"]'),
}
_DOT_SHAPES = {"ResourceFlavor": "hexagon", "ClusterQueue": "box", "LocalQueue": "ellipse", "Namespace": "folder",
               "AdmissionCheck": "diamond", "MultiKueueConfig": "component", "ProvisioningRequestConfig": "component",
               "MultiKueueCluster": "cylinder", "Topology": "tab"}
HIGHLIGHT_FILL = "#fff3cd"
HIGHLIGHT_STROKE = "#d97706"


def _mermaid_text(text: str) -> str:
    # Mermaid labels are quoted; what could end the label, the line or the fence becomes an entity code.
    return mermaid_text(text)


def _mermaid_label(title: str, lines: list[str]) -> str:
    return "<br/>".join([f"<b>{_mermaid_text(title)}</b>"] + [_mermaid_text(t) for t in lines])


def _mermaid_node(node: Node, indent: str) -> str:
    left, right = _MERMAID_SHAPES.get(node.kind, ('["', '"]'))
    return f"{indent}{node.id}{left}{_mermaid_label(node.title, node.lines)}{right}"


def _mermaid_group(group: Group, nodes: dict[str, Node], depth: int, out: list[str]) -> None:
    indent = "  " * depth
    out.append(f'{indent}subgraph {group.id}["{_mermaid_label(group.title, group.lines)}"]')
    for member in group.members:
        out.append(_mermaid_node(nodes[member], indent + "  "))
    for child in group.children:
        _mermaid_group(child, nodes, depth + 1, out)
    out.append(f"{indent}end")


def _all_groups(groups: list[Group]) -> list[Group]:
    out, stack = [], list(reversed(groups))
    while stack:
        g = stack.pop()
        out.append(g)
        stack.extend(reversed(g.children))
    return out


def mermaid(topo: Topology) -> str:
    out = ["flowchart LR"]
    grouped = topo.grouped()
    for group in topo.groups:
        _mermaid_group(group, topo.nodes, 1, out)
    for node in topo.nodes.values():
        if node.id not in grouped:
            out.append(_mermaid_node(node, "  "))
    for edge in topo.edges:
        arrow = "-.->" if edge.dotted else "-->"
        label = f'|"{_mermaid_text(edge.label)}"|' if edge.label else ""
        out.append(f"  {edge.source} {arrow}{label} {edge.target}")
    highlighted = [n.id for n in topo.nodes.values() if n.highlight]
    highlighted += [g.id for g in _all_groups(topo.groups) if g.highlight]
    if highlighted:
        out.append(f"  classDef changed fill:{HIGHLIGHT_FILL},stroke:{HIGHLIGHT_STROKE},stroke-width:3px")
        out.append(f"  class {','.join(highlighted)} changed")
    links = [str(i) for i, e in enumerate(topo.edges) if e.highlight]
    if links:
        out.append(f"  linkStyle {','.join(links)} stroke:{HIGHLIGHT_STROKE},stroke-width:3px")
    return "\n".join(out) + "\n"


def _dot_text(text: str) -> str:
    return one_line(text).replace("\\", "\\\\").replace('"', '\\"')


def _dot_label(title: str, lines: list[str]) -> str:
    return "\\n".join(_dot_text(t) for t in [title] + lines)


def _dot_node(node: Node, indent: str) -> str:
    attrs = [f'label="{_dot_label(node.title, node.lines)}"', f"shape={_DOT_SHAPES.get(node.kind, 'box')}"]
    if node.highlight:
        attrs += ["style=filled", f'fillcolor="{HIGHLIGHT_FILL}"', f'color="{HIGHLIGHT_STROKE}"', "penwidth=3"]
    return f"{indent}{node.id} [{', '.join(attrs)}];"


def _dot_group(group: Group, nodes: dict[str, Node], depth: int, out: list[str]) -> None:
    indent = "  " * depth
    out.append(f"{indent}subgraph cluster_{group.id} {{")
    out.append(f'{indent}  label="{_dot_label(group.title, group.lines)}";')
    if group.highlight:
        out.append(f'{indent}  color="{HIGHLIGHT_STROKE}"; penwidth=3;')
    for member in group.members:
        out.append(_dot_node(nodes[member], indent + "  "))
    for child in group.children:
        _dot_group(child, nodes, depth + 1, out)
    out.append(f"{indent}}}")


def _dot_edge(edge: Edge) -> str:
    attrs = []
    if edge.label:
        attrs.append(f'label="{_dot_text(edge.label)}"')
    if edge.dotted:
        attrs.append("style=dashed")
    if edge.highlight:
        attrs += [f'color="{HIGHLIGHT_STROKE}"', "penwidth=3"]
    suffix = f" [{', '.join(attrs)}]" if attrs else ""
    return f"  {edge.source} -> {edge.target}{suffix};"


def dot(topo: Topology) -> str:
    out = ["digraph kueue {", "  rankdir=LR;", '  node [fontname="Helvetica"];']
    grouped = topo.grouped()
    for group in topo.groups:
        _dot_group(group, topo.nodes, 1, out)
    for node in topo.nodes.values():
        if node.id not in grouped:
            out.append(_dot_node(node, "  "))
    out.extend(_dot_edge(e) for e in topo.edges)
    out.append("}")
    return "\n".join(out) + "\n"
