"""From Python: one call turns an output into display objects, PIL images or bytes."""

from __future__ import annotations

import copy
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from IPython.display import SVG, Audio, Image, Video
from PIL import Image as PILImage

import nbext

from .conftest import b64, jpeg, mp4, picture, png, save, wav


def test_nbext_media_find_is_the_one_call() -> None:
    output = {"images": [b64(png(64, 48))], "speech": b64(wav()), "clip": b64(mp4())}
    before = copy.deepcopy(output)
    found = nbext.media.find(output)
    assert found.paths == ["images[0]", "speech", "clip"]
    assert output == before


def test_items_become_ipython_display_objects_with_their_bytes() -> None:
    image_data, sound, clip = jpeg(80, 60), wav(), mp4()
    found = nbext.media.find({"i": b64(image_data), "a": b64(sound), "v": b64(clip)})
    image, audio, video = (item.to_ipython() for item in found)
    assert isinstance(image, Image) and image.data == image_data and image.format == "jpeg"
    assert isinstance(audio, Audio) and audio.data == sound and audio.mimetype == "audio/wav"
    assert f"data:audio/wav;base64,{b64(sound)}" in audio._repr_html_()
    assert isinstance(video, Video) and video.data == clip and video.mimetype == "video/mp4"
    svg = nbext.media.find("data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg'/%3E")
    assert isinstance(svg[0].to_ipython(), SVG)


@pytest.mark.parametrize(("fmt", "mime"), [("WEBP", "image/webp"), ("GIF", "image/gif")])
def test_every_image_format_displays_natively(fmt: str, mime: str) -> None:
    item = nbext.media.find(b64(save(picture(20, 10), fmt)))[0]
    bundle, _ = item.to_ipython()._repr_mimebundle_()
    assert list(bundle) == [mime]


def test_url_items_become_display_objects_by_reference() -> None:
    found = nbext.media.find(["https://x.org/a.png", "https://x.org/b.mp3", "https://x.org/c.mp4"])
    image, audio, video = (item.to_ipython() for item in found)
    assert image.url == "https://x.org/a.png" and image.data is None
    assert audio.url == "https://x.org/b.mp3" and not audio.embed
    assert video.url == "https://x.org/c.mp4"


def test_images_become_pil_images() -> None:
    item = nbext.media.find({"x": b64(png(64, 48, mode="RGBA"))})[0]
    image = item.to_pil()
    assert isinstance(image, PILImage.Image)
    assert (image.size, image.mode) == ((64, 48), "RGBA")


def test_to_pil_explains_what_it_cannot_do() -> None:
    found = nbext.media.find({"s": b64(wav()), "u": "https://x.org/a.png"})
    with pytest.raises(ValueError, match=r"^s is audio/wav; only raster images become PIL images$"):
        found["s"].to_pil()
    with pytest.raises(ValueError, match=r"^u is a URL; call \.fetch\(\) first to download it$"):
        found["u"].to_pil()


@pytest.fixture
def media_server() -> Iterator[str]:
    """A loopback server for ``/pic.png`` (a real PNG) and 404 for anything else."""
    body = png(40, 30)

    class Handle(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            ok = self.path.startswith("/pic.png")
            self.send_response(200 if ok else 404)
            self.send_header("Content-Length", str(len(body) if ok else 0))
            self.end_headers()
            if ok:
                self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handle)
    thread = threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
    thread.join(5)


def test_a_url_is_downloaded_only_when_asked(media_server: str) -> None:
    item = nbext.media.find({"u": f"{media_server}/pic.png?sig=1"})["u"]
    assert item.data is None
    fetched = item.fetch()
    assert (fetched.size, fetched.width, fetched.height, fetched.path) == (
        len(png(40, 30)),
        40,
        30,
        "u",
    )
    assert fetched.url == item.url and fetched.to_pil().size == (40, 30)
    assert fetched.fetch() is fetched


def test_a_failed_download_says_so(media_server: str) -> None:
    item = nbext.media.find(f"{media_server}/missing.png")[0]
    with pytest.raises(
        OSError, match=r"^could not fetch output from http://\S+: HTTP 404 Not Found$"
    ):
        item.fetch(timeout=5)
    closed = nbext.media.find("http://127.0.0.1:9/gone.wav")[0]
    with pytest.raises(
        OSError, match=r"^could not fetch output from http://127.0.0.1:9/gone.wav: "
    ):
        closed.fetch(timeout=5)


def test_a_media_list_draws_itself_as_a_gallery() -> None:
    found = nbext.media.find([b64(png()), b64(wav())])
    html = found._repr_html_()
    assert html.count("<figure") == 2 and "<audio controls" in html
