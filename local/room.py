"""A whole waiting room on this machine: its store, gateway, scheduler, record, demo shop.

`LocalRoom.start()` binds the ports first (a busy port is reported before anything else
starts), then creates the room's table, queues and ticket keys' secret in its own store
(local/emulator.py) with the line and keys an earlier run saved (local/saved_state.py), binds
the real room code to it, gives the room its first ticket key if it has none, records the room
for the operator CLI and starts serving and scheduling. `stop()` undoes all of it in
reverse order, joining every thread it started; the saved line stays for the next start.
Rooms with different names can run in one process side by side.
"""

from __future__ import annotations

import dataclasses
import logging
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from beekeeper.core.config_dir import local_state_file
from beekeeper.core.datamodel import minute_key
from beekeeper.core.headers import browser_origin
from beekeeper.core.local_room import (
    DEFAULT_DEMO_PORT,
    DEFAULT_OPERATOR_PORT,
    DEFAULT_PORT,
    FLAGS_ONLY_ROOM,
)
from beekeeper.core.plain_page import Brand
from beekeeper.core.push import KEEP_ALIVE_SECONDS
from beekeeper.core.retry import Pauses
from beekeeper.core.settings import Mode, RoomSettings
from beekeeper.local.channel import LocalChannel
from beekeeper.local.demo_shop import CapacityMode, DemoShop, Occupancy, RoomFacts
from beekeeper.local.edge import Edge
from beekeeper.local.emulator import Emulator, RoomResources
from beekeeper.local.gateway import Gateway
from beekeeper.local.http_server import ServerThread
from beekeeper.local.live_counters import LiveCounters, Reading
from beekeeper.local.operator_view import OperatorView
from beekeeper.local.record import RoomRecord, RoomUrls, room_urls, stack_outputs
from beekeeper.local.room_code import ClientFactory, RoomCode, load_room_code
from beekeeper.local.saved_state import Restored, SavedState
from beekeeper.local.schedule import MinuteSchedule
from beekeeper.room.room_state import Unprocessed, read_snapshot, write_config
from beekeeper.room.ticket_keys import TicketKeyStore

log = logging.getLogger("beekeeper.local")

DEFAULT_MINUTE_SECONDS = 60.0
GATEWAY_THREADS = 16
# How long a stop waits for the room's threads. A request in progress takes milliseconds; a
# consumer long-polling or sleeping until its minute's end is not waited for (it ends with the
# process, and the saved line keeps what it held: local/saved_state.py).
STOP_TIMEOUT_SECONDS = 1.0
# The counters' reads retry as the room's own do (core/retry.py), on this machine's time.
_PAUSES = Pauses(sleep=time.sleep, random=random.random)

CodeLoader = Callable[[RoomSettings, RoomResources, ClientFactory, float], RoomCode]


def _load_real_code(
    settings: RoomSettings, resources: RoomResources, client: ClientFactory, minute_seconds: float
) -> RoomCode:
    return load_room_code(settings, resources, client, minute_seconds=minute_seconds)


@dataclass(frozen=True)
class LocalOptions:
    """How a local room runs on this machine, besides its settings (a `RoomSettings`): its
    ports, its minute, the demo shop and its saved line."""

    port: int = DEFAULT_PORT
    demo: bool = False
    demo_port: int = DEFAULT_DEMO_PORT
    # The demo shop is the room's origin: the settings' origin is its address once its port
    # is bound (a room described by flags without --origin).
    origin_is_demo: bool = False
    operator_port: int = DEFAULT_OPERATOR_PORT  # the live operator view's
    minute_seconds: float = DEFAULT_MINUTE_SECONDS
    new_line: bool = False  # forget the line saved by an earlier run of this room
    # Keep the line across restarts (local/saved_state.py); off for throwaway test rooms.
    save_line: bool = True
    # The settings the command line gave: the rate and a scheduled start among them win over
    # what `beekeeper rate` or `beekeeper schedule` set in an earlier run's saved line.
    given: frozenset[str] = frozenset()
    # The push channel's keep-alive: AWS's 60 s (tests shorten it).
    keep_alive_seconds: float = KEEP_ALIVE_SECONDS


def local_room(**settings: Any) -> RoomSettings:
    """A local room described by `settings` alone: what they leave out is the demo's
    (core/local_room.py `FLAGS_ONLY_ROOM`), then each setting's default."""
    return RoomSettings.from_mapping({**FLAGS_ONLY_ROOM, **settings})


class _LateApp:
    """The gateway's WSGI app, bound once the room code is loaded (the port is bound first)."""

    def __init__(self) -> None:
        self.app: Callable[..., Any] | None = None

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        if self.app is None:
            start_response("503 Service Unavailable", [("Retry-After", "1")])
            return [b"starting"]
        return self.app(environ, start_response)


class LocalRoom:
    def __init__(
        self,
        settings: RoomSettings,
        options: LocalOptions = LocalOptions(),
        *,
        code_loader: CodeLoader = _load_real_code,
    ) -> None:
        if options.origin_is_demo and not options.demo:
            raise ValueError("the demo shop is the origin only when it runs (demo=True)")
        self.room_settings = settings  # as given; `settings` once started (the shop's origin)
        self.options = options
        self._code_loader = code_loader
        self._stack: list[Callable[[], None]] = []
        self.settings: RoomSettings | None = None
        self.urls: RoomUrls | None = None
        self.shop_url: str | None = None
        self.endpoint_url = ""
        self.resources: RoomResources | None = None
        self.record: RoomRecord | None = None
        self.edge: Edge | None = None  # the public address: the edge in front of the gateway
        self.emulator: Emulator | None = None  # the room's store, as its AWS clients reach it
        self.restored = Restored(found=False)
        self.operator_url: str | None = None
        self.channel: LocalChannel | None = None  # the push channel pages subscribe to
        # The room's counters a few times a minute (or second, in a shortened minute).
        sample_seconds = min(2.0, max(0.25, options.minute_seconds / 4))
        self.counters = LiveCounters(options.minute_seconds, sample_seconds)
        self._reporter_stop = threading.Event()

    # -- lifecycle ------------------------------------------------------------------------

    def start(self) -> None:
        try:
            self._start()
        except BaseException:
            self.stop()
            raise

    def _start(self) -> None:
        """Bind the ports, start the store and the room in it, then serve and run the minutes.
        Each part started is pushed on `_stack`, so `stop` undoes exactly what ran."""
        late_shop = _LateApp()
        shop_server = self._demo_shop_server(late_shop)
        options = self.options
        settings = self.room_settings
        if options.origin_is_demo:
            assert self.shop_url is not None
            settings = settings.replace(origin=self.shop_url)
        self.settings = settings

        record = RoomRecord(settings.name)
        record.check_free()

        late_gateway = _LateApp()
        gateway_server = ServerThread(
            late_gateway, port=options.port, threads=GATEWAY_THREADS, what="local gateway"
        )
        self._stack.append(gateway_server.stop)
        self.urls = room_urls(gateway_server.base_url)
        view_server = self._operator_view_server()

        emulator, resources = self._start_store(settings, gateway_server)
        code = self._code_loader(settings, resources, emulator.client, options.minute_seconds)
        dynamodb = emulator.client("dynamodb")
        self._prepare_room(settings, resources, emulator, dynamodb)
        self.edge = self._edge(code, settings, resources, emulator, gateway_server)
        late_gateway.app = self.edge
        if shop_server is not None:
            late_shop.app = self._demo_shop(settings, settings.origin, resources, dynamodb)

        record.write(
            settings,
            stack_outputs(
                settings, self.urls, resources, self.endpoint_url, options.minute_seconds
            ),
        )
        self.record = record
        self._stack.append(record.remove)

        gateway_server.start()
        if shop_server is not None:
            shop_server.start()
        view_server.start()
        self._run_minutes(code, settings)
        self._run_reporter(dynamodb, resources.table_name, settings)

    # -- the parts it starts ---------------------------------------------------------------

    def _demo_shop_server(self, late_shop: _LateApp) -> ServerThread | None:
        """With --demo: the demo shop's port, bound (its app comes once the room is up)."""
        if not self.options.demo:
            return None
        shop_server = ServerThread(
            late_shop, port=self.options.demo_port, threads=4, what="demo shop"
        )
        self._stack.append(shop_server.stop)
        # "localhost", not 127.0.0.1: the shop is a different site from the room, as in
        # production, so the browser treats the room's cookie as the room's alone.
        self.shop_url = f"http://localhost:{shop_server.port}/"
        return shop_server

    def _operator_view_server(self) -> ServerThread:
        assert self.settings is not None
        view = OperatorView(room=self.settings.name, counters=self.counters)
        view_server = ServerThread(
            view, port=self.options.operator_port, threads=4, what="operator view"
        )
        self._stack.append(view_server.stop)
        view.port = view_server.port
        self.operator_url = view_server.base_url + "/"
        return view_server

    def _start_store(
        self, settings: RoomSettings, gateway_server: ServerThread
    ) -> tuple[Emulator, RoomResources]:
        """The room's push channel and store in process, its resources, and the line saved by an
        earlier run."""
        # The push channel, on loopback ports of its own: its pages subscribe there, its
        # writers publish there, as to the room's Event API in AWS.
        channel = LocalChannel(settings.name, keep_alive_seconds=self.options.keep_alive_seconds)
        channel.start()
        self._stack.append(channel.stop)
        self.channel = channel

        emulator = Emulator()
        self.emulator = emulator
        self.endpoint_url = emulator.start()
        self._stack.append(emulator.stop)
        # The room's page is served from the gateway's address: its public origin.
        self.resources = resources = dataclasses.replace(
            emulator.create_room_resources(settings.name),
            room_origin=browser_origin(gateway_server.base_url),
            channel=channel.page_channel(),
        )
        if self.options.save_line:
            saved = SavedState(local_state_file(settings.name))
            self.restored = saved.restore(emulator, discard=self.options.new_line)
            self._stack.append(saved.close)
            said = self.restored.sentence(settings.name, saved.path)
            if said:
                (log.warning if self.restored.lost_reason else log.info)("%s", said)
        return emulator, resources

    def _prepare_room(
        self, settings: RoomSettings, resources: RoomResources, emulator: Emulator, dynamodb: Any
    ) -> None:
        """The room's first ticket key, a rate or start given on the command line, and the
        current minute taken over from the run before."""
        assert self.urls is not None
        if self.restored.found:
            _take_over_this_minute(dynamodb, resources.table_name, self.options)
        # The room's ticket key, as `beekeeper deploy` gives a deployed room its first.
        TicketKeyStore(
            secretsmanager=emulator.client("secretsmanager"),
            secret_id=resources.ticket_keys_secret,
            dynamodb=emulator.client("dynamodb"),
            table=resources.table_name,
            clock=time.time,
        ).ensure_first_key(issuer=self.urls.issuer)
        # A rate or a start given on the command line wins over one set before by
        # `beekeeper rate` or `beekeeper schedule` in the saved line: one write for both.
        options = self.options
        rate_given = "rate" in options.given
        start_given = "starts_at" in options.given
        if (rate_given or start_given) and self.restored.found:
            write_config(
                dynamodb,
                resources.table_name,
                settings,
                now=time.time(),
                operator_rate=settings.rate if rate_given else None,
                starts_at=settings.starts_at_epoch if start_given else None,
            )

    def _edge(
        self,
        code: RoomCode,
        settings: RoomSettings,
        resources: RoomResources,
        emulator: Emulator,
        gateway_server: ServerThread,
    ) -> Edge:
        """The public port's app: the edge in front of the gateway, as a deployed room's
        public address is its distribution's (core/edge.py)."""
        gateway = Gateway(
            code=code,
            settings=settings,
            dynamodb=emulator.template_target(),
            table_name=resources.table_name,
            host=f"127.0.0.1:{gateway_server.port}",
        )
        return Edge(gateway, mode=settings.mode)

    def _demo_shop(
        self, settings: RoomSettings, origin: str, resources: RoomResources, dynamodb: Any
    ) -> DemoShop:
        """The demo shop, verifying the room's tickets as a shop should (local/demo_shop.py)."""
        urls = self.urls
        assert urls is not None
        return DemoShop(
            room=RoomFacts(
                issuer=urls.issuer,
                room=settings.name,
                client_url=urls.client_check_url,
                marketing_url=urls.marketing_url,
                leave_url=urls.leave_url,
            ),
            shop_origin=origin,
            brand=Brand.of(settings),
            capacity=(
                CapacityMode(
                    session_minutes=settings.session_minutes,
                    occupancy=lambda: _occupancy(dynamodb, resources.table_name, settings),
                    presence_grace_seconds=settings.presence_grace_seconds,
                )
                if settings.mode is Mode.CAPACITY
                else None
            ),
        )

    def _run_minutes(self, code: RoomCode, settings: RoomSettings) -> None:
        """EventBridge's minute and Lambda's async invoke, stood in for (local/schedule.py)."""
        scheduler = MinuteSchedule(
            code,
            minute_seconds=self.options.minute_seconds,
            with_governor=settings.dynamic_rate_throttling,
        )
        scheduler.start()
        self._stack.append(lambda: self._stop_scheduler(scheduler))

    def _run_reporter(self, dynamodb: Any, table_name: str, settings: RoomSettings) -> None:
        """The room's counters for the live view and the log (`_report`), in a thread."""
        reporter = threading.Thread(
            target=self._report,
            args=(dynamodb, table_name, settings),
            name="beekeeper-reporter",
            daemon=True,
        )
        reporter.start()
        self._stack.append(lambda: self._stop_reporter(reporter))

    def stop(self) -> None:
        """Stop everything started so far, last started first; safe to call twice."""
        while self._stack:
            undo = self._stack.pop()
            try:
                undo()
            except Exception:
                log.exception("stopping the local room")

    def _stop_scheduler(self, scheduler: MinuteSchedule) -> None:
        left = scheduler.stop(STOP_TIMEOUT_SECONDS)
        if left:
            # A consumer may long-poll until its minute ends (a daemon thread: it ends with the
            # process). Nothing it holds is lost: its messages stay in the saved line until
            # their deletes were saved, so a restart admits them again if need be.
            log.info("still finishing at stop: %s", ", ".join(sorted(set(left))))

    def _stop_reporter(self, reporter: threading.Thread) -> None:
        self._reporter_stop.set()
        reporter.join(STOP_TIMEOUT_SECONDS)

    # -- the room's log -------------------------------------------------------------------

    def _report(self, dynamodb: Any, table_name: str, settings: RoomSettings) -> None:
        """The table's counters for the live view, and a log line when they moved."""
        log_every = min(5.0, max(1.0, self.options.minute_seconds))
        logged_at = 0.0
        arrived = admitted = 0
        while True:
            try:
                snapshot = read_snapshot(dynamodb, table_name, settings, pauses=_PAUSES)
            except Exception as error:  # the emulator stopping under us
                log.debug("counters unavailable: %s", error)
                snapshot = None
            if snapshot is not None:
                counts = self.edge.counts if self.edge is not None else None
                pushed = self.channel.counts() if self.channel is not None else None
                self.counters.add(
                    Reading(
                        at=time.time(),
                        arrivals=snapshot.arrivals_total,
                        admitted=snapshot.admitted_total,
                        rate=snapshot.config.rate,
                        enabled=snapshot.config.enabled,
                        edge_requests=counts.edge_total if counts else 0,
                        origin_requests=counts.origin_total if counts else 0,
                        subscriptions=pushed.subscriptions if pushed else 0,
                        publishes=pushed.publishes if pushed else 0,
                        deliveries=pushed.deliveries if pushed else 0,
                    )
                )
            if self._reporter_stop.wait(self.counters.sample_seconds):
                return
            if snapshot is None or time.monotonic() - logged_at < log_every:
                continue
            logged_at = time.monotonic()
            now_arrived, now_admitted = snapshot.arrivals_total, snapshot.admitted_total
            if (now_arrived, now_admitted) != (arrived, admitted):
                log.info(
                    "arrivals +%d (total %d), admitted +%d (total %d), waiting %d",
                    now_arrived - arrived,
                    now_arrived,
                    now_admitted - admitted,
                    now_admitted,
                    max(0, now_arrived - now_admitted),
                )
                arrived, admitted = now_arrived, now_admitted


def _take_over_this_minute(dynamodb: Any, table_name: str, options: LocalOptions) -> None:
    """A restart mid-minute: the minute's claim is the last run's, whose consumers ended with
    it; without the claim the first trigger plans the minute again from the line, so a line
    kept across the restart moves at once rather than at the next minute."""
    minute = int(time.time() // options.minute_seconds)
    dynamodb.delete_item(TableName=table_name, Key={"pk": {"S": minute_key(minute)}})


def _occupancy(dynamodb: Any, table_name: str, settings: RoomSettings) -> Occupancy | None:
    """How full the shop is: the room's counters, read as `beekeeper status` reads them."""
    try:
        snapshot = read_snapshot(dynamodb, table_name, settings, pauses=_PAUSES)
    except (BotoCoreError, ClientError, Unprocessed) as error:
        log.debug("the demo shop could not read the room's counters: %s", error)
        return None
    return Occupancy(inside=snapshot.inside, max_inside=snapshot.config.max_inside)


def wait_for_stop(stop_requested: threading.Event) -> None:
    """Block the main thread until Ctrl-C or SIGTERM (signals reach only the main thread)."""
    while not stop_requested.wait(0.5):
        time.sleep(0)
