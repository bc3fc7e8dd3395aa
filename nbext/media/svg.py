"""An SVG reduced to a picture: what nbext writes to disk for a browser to open.

Opened on its own (a "show full size" link, an exported page), an SVG runs its scripts
and event handlers with the rights of the site serving it and may load other files;
drawn through an ``<img>`` it cannot, but a file beside the notebook has no such guard.
So the file keeps only what draws: SVG's shape, text, paint and filter elements, their
attributes less event handlers, and references only to ``#id`` fragments or inline
raster pictures. An allowlist, so what nobody thought of is dropped, never let through.
Input that is not well-formed XML with an ``<svg>`` root, declares entities or nests
past the recursion limit is not offered as an SVG (``sanitised_svg`` returns None).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from xml.sax.saxutils import escape, quoteattr

SVG_NS = "http://www.w3.org/2000/svg"
XLINK_NS = "http://www.w3.org/1999/xlink"
XML_NS = "http://www.w3.org/XML/1998/namespace"

_DRAWING = frozenset(
    """
    svg g defs symbol use title desc switch style path rect circle ellipse line polyline
    polygon image text tspan textPath linearGradient radialGradient stop pattern clipPath
    mask marker filter feBlend feColorMatrix feComponentTransfer feComposite
    feConvolveMatrix feDiffuseLighting feDisplacementMap feDistantLight feDropShadow
    feFlood feFuncA feFuncB feFuncG feFuncR feGaussianBlur feImage feMerge feMergeNode
    feMorphology feOffset fePointLight feSpecularLighting feSpotLight feTile feTurbulence
    """.split()  # noqa: SIM905  a word list reads better than 53 quoted strings
)
"""SVG elements that only draw. ``a`` is not here: its children are kept, the link not."""

_FOREIGN_ATTRIBUTES = ((XLINK_NS, "href"), (XML_NS, "space"), (XML_NS, "lang"))
_RASTER_DATA = re.compile(r"\s*data:image/(png|jpeg|gif|webp);base64,", re.I)
_URL = re.compile(r"url\(\s*['\"]?\s*([^)'\"\s]*)", re.I)
_ACTIVE_CSS = re.compile(r"@import|image-set\s*\(|expression\s*\(|javascript:|behavior\s*:", re.I)


def sanitised_svg(data: bytes) -> bytes | None:
    """``data`` as an SVG that draws the same and can do nothing else; None when ``data``
    is not well-formed XML with an ``<svg>`` root, or declares entities (see the module)."""
    if b"<!ENTITY" in data.upper():
        return None
    try:
        root = ET.fromstring(data)
    except ET.ParseError:
        return None
    if root.tag != f"{{{SVG_NS}}}svg":
        return None
    try:
        _clean(root)
        body = _serialised(root, f' xmlns="{SVG_NS}" xmlns:xlink="{XLINK_NS}"')
    except RecursionError:  # thousands of nested groups: no picture anyone drew
        return None
    return ('<?xml version="1.0" encoding="UTF-8"?>\n' + body).encode()


def _serialised(element: ET.Element, declarations: str = "") -> str:
    """``element`` as XML in SVG's default namespace; ``ET.tostring`` would spell it
    ``ns0:svg`` unless a process-wide prefix were registered, in a kernel not ours."""
    prefixes = {"": "", XLINK_NS: "xlink:", XML_NS: "xml:"}
    attributes = "".join(
        f" {prefixes[namespace]}{local}={quoteattr(value)}"
        for (namespace, local), value in ((_split(k), v) for k, v in element.attrib.items())
    )
    name = _split(element.tag)[1]
    inner = escape(element.text or "") + "".join(
        _serialised(child) + escape(child.tail or "") for child in element
    )
    return f"<{name}{declarations}{attributes}>{inner}</{name}>"


def _clean(element: ET.Element) -> None:
    """Keep ``element``'s drawing attributes, and of its children only those that draw."""
    for name, value in list(element.attrib.items()):
        if not _keeps_attribute(element, name, value):
            del element.attrib[name]
    if _svg_local_name(element) == "style" and not _inert_css("".join(element.itertext())):
        element.text = ""
    for child in list(element):
        local = _svg_local_name(child)
        if local == "a":
            _unwrap(child)
        elif local in _DRAWING:
            _clean(child)
        else:
            element.remove(child)


def _unwrap(link: ET.Element) -> None:
    """A link becomes a group in its place: what it drew stays, where it led does not."""
    link.tag = f"{{{SVG_NS}}}g"
    for name in list(link.attrib):
        if _split(name)[1] in ("href", "target"):
            del link.attrib[name]
    _clean(link)


def _keeps_attribute(element: ET.Element, name: str, value: str) -> bool:
    namespace, local = _split(name)
    if local.lower().startswith("on"):
        return False
    # of other namespaces only these: xml:base, for one, would move relative references
    if namespace and (namespace, local) not in _FOREIGN_ATTRIBUTES:
        return False
    if "javascript:" in value.lower().replace(" ", ""):
        return False
    if local == "href":
        return value.startswith("#") or (
            _svg_local_name(element) in ("image", "feImage") and bool(_RASTER_DATA.match(value))
        )
    return _inert_css(value)  # any attribute: fill="url(#a)", style="...", ...


def _inert_css(text: str) -> bool:
    """True when ``text`` loads nothing and runs nothing: its ``url()``s are ``#id``s."""
    if _ACTIVE_CSS.search(text):
        return False
    return all(target.startswith("#") for target in _URL.findall(text))


def _svg_local_name(element: ET.Element) -> str | None:
    """The element's name in the SVG namespace; None for a comment or another namespace."""
    if not isinstance(element.tag, str):
        return None
    namespace, local = _split(element.tag)
    return local if namespace == SVG_NS else None


def _split(name: str) -> tuple[str, str]:
    if name.startswith("{"):
        namespace, _, local = name[1:].partition("}")
        return namespace, local
    return "", name
