"""Tools of the service apps: maps and navigation, wallet and payments, shopping and food, travel, audio and
entertainment (security and privacy: :mod:`.security`)."""

from __future__ import annotations

from typing import Annotated, Literal

import pydantic

from pytest_mobilebench.suites.planner.declare import tool
from pytest_mobilebench.suites.planner.sandbox import Sandbox, ToolError
from pytest_mobilebench.suites.planner.tools._common import (
    Amount,
    Date,
    Id,
    Name,
    ids,
    matches,
    require_online,
)

Mode = Literal["driving", "walking", "transit", "cycling"]
_SPEED_KMH = {"driving": 40, "walking": 5, "transit": 25, "cycling": 15}

# ----------------------------------------------------------------------------------------------- maps


@tool("maps", write=False)
def search_places(sb: Sandbox, query: Name) -> list[dict]:
    """Find places on the map (restaurants, shops, stations, addresses) by name, kind or address.

    Args:
        query: words of the name, kind or address.
    """
    return [p for p in sb.rows("places") if matches(query, p["name"], p["kind"], p["address"], p["label"])]


@tool("maps", write=True)
def save_place(sb: Sandbox, place_id: Id, label: Name) -> dict:
    """Save a place to the map's saved places under a label such as Home or Work.

    Args:
        place_id: the place.
        label: the label to save it under.
    """
    sb.get("places", place_id, what="place")
    for p in sb.rows("places", label=label):
        if p["id"] != place_id:
            raise ToolError(
                "conflict", f"the label {label!r} is already used by {p['name']!r}", "unsave that place first"
            )
    return sb.update("places", place_id, saved=1, label=label)


@tool("maps", write=True)
def unsave_place(sb: Sandbox, place_id: Id) -> dict:
    """Remove a place from saved places.

    Args:
        place_id: the place.
    """
    p = sb.get("places", place_id, what="place")
    if not p["saved"]:
        raise ToolError("invalid_transition", f"{p['name']} is not saved")
    return sb.update("places", place_id, saved=0, label="")


@tool("maps", write=True)
def start_navigation(sb: Sandbox, place_id: Id, mode: Mode = "driving") -> dict:
    """Start turn-by-turn navigation (directions) to a place.

    Args:
        place_id: the destination.
        mode: how you travel.
    """
    sb.require_on("location_services", "navigation")
    place = sb.get("places", place_id, what="place")
    if sb.rows("routes", status="active"):
        raise ToolError(
            "conflict",
            "a navigation is already running",
            "stop it with stop_navigation first",
            ("stop_navigation", "list_routes"),
        )
    return {
        **sb.insert("routes", {"place_id": place_id, "mode": mode, "status": "active"}, prefix="rte"),
        "destination": place["name"],
    }


@tool("maps", write=True)
def stop_navigation(sb: Sandbox, route_id: Id) -> dict:
    """End the running navigation.

    Args:
        route_id: the active route.
    """
    r = sb.get("routes", route_id, what="route")
    if r["status"] != "active":
        raise ToolError("invalid_transition", f"route {route_id} is {r['status']}")
    return sb.update("routes", route_id, status="ended")


@tool("maps", write=False)
def list_routes(sb: Sandbox) -> list[dict]:
    """Navigation routes, the running one with status active."""
    return sb.rows("routes")


@tool("maps", write=False)
def estimate_travel_time(sb: Sandbox, place_id: Id, mode: Mode = "driving") -> dict:
    """How long it takes to get to a place from the current location.

    Args:
        place_id: the destination.
        mode: how you travel.
    """
    sb.require_on("location_services", "travel time estimates")
    place = sb.get("places", place_id, what="place")
    km = (sum(map(ord, place["id"])) % 17) + 2
    return {"place": place["name"], "km": km, "minutes": round(km / _SPEED_KMH[mode] * 60)}


@tool("maps", write=True)
def share_location(sb: Sandbox, phone: Annotated[str, pydantic.Field(pattern=r"^\+?[0-9]{3,15}$")]) -> dict:
    """Send your current location to someone by text message.

    Args:
        phone: the recipient's number.
    """
    sb.require_on("location_services", "sharing your location")
    sb.require_off("airplane_mode", "sending a message")
    return sb.insert(
        "messages",
        {
            "number": phone,
            "body": "[my current location]",
            "direction": "outgoing",
            "status": "sent",
            "read": 1,
            "sent_at": sb.now,
            "scheduled_for": "",
        },
        prefix="msg",
    )


# ----------------------------------------------------------------------------------------------- wallet


@tool("wallet", write=False)
def list_cards(sb: Sandbox) -> list[dict]:
    """Payment cards in the wallet with balance, default card and frozen state."""
    return sb.rows("cards")


@tool("wallet", write=True)
def freeze_card(sb: Sandbox, card_id: Id, frozen: bool = True) -> dict:
    """Freeze a card (block payments, e.g. when lost) or unfreeze it.

    Args:
        card_id: the card.
        frozen: true to freeze, false to unfreeze.
    """
    card = sb.get("cards", card_id, what="card")
    if bool(card["frozen"]) == frozen:
        raise ToolError("invalid_transition", f"card {card['label']} is already {'frozen' if frozen else 'active'}")
    return sb.update("cards", card_id, frozen=frozen)


@tool("wallet", write=True)
def set_default_card(sb: Sandbox, card_id: Id) -> dict:
    """Make a card the default for payments.

    Args:
        card_id: the card.
    """
    sb.get("cards", card_id, what="card")
    for c in sb.rows("cards", is_default=1):
        sb.update("cards", c["id"], is_default=0)
    return sb.update("cards", card_id, is_default=1)


@tool("wallet", write=True)
def send_payment(
    sb: Sandbox,
    payee: Name,
    amount: Amount,
    card_id: Id | None = None,
    note: str = "",
    currency: Literal["EUR", "USD", "GBP"] = "EUR",
) -> dict:
    """Pay money to a person or merchant from a wallet card (default card when none is given).

    Args:
        payee: who receives the money.
        amount: how much.
        card_id: card to pay with, default card if left out.
        note: payment reference, optional.
        currency: currency code.
    """
    require_online(sb, "payments")
    cards = [sb.get("cards", card_id, what="card")] if card_id else sb.rows("cards", is_default=1)
    if not cards:
        raise ToolError("not_found", "no default card set", "give card_id or set_default_card", ("list_cards",))
    card = cards[0]
    if card["frozen"]:
        raise ToolError(
            "permission_denied",
            f"card {card['label']} is frozen",
            "unfreeze it or pay with another card",
            ("freeze_card", "list_cards"),
        )
    if card["balance"] < amount:
        raise ToolError(
            "conflict",
            f"insufficient funds on {card['label']}: balance {card['balance']}",
            "pay with another card",
            ("list_cards",),
        )
    sb.update("cards", card["id"], balance=round(card["balance"] - amount, 2))
    return sb.insert(
        "transactions",
        {
            "payee": payee,
            "amount": amount,
            "currency": currency,
            "card_id": card["id"],
            "note": note,
            "status": "completed",
        },
        prefix="txn",
    )


@tool("wallet", write=False)
def list_transactions(sb: Sandbox, query: str = "") -> list[dict]:
    """Past payments and refunds, optionally filtered by payee or note words.

    Args:
        query: words of the payee or note, optional.
    """
    return [t for t in sb.rows("transactions") if not query or matches(query, t["payee"], t["note"])]


@tool("wallet", write=True)
def refund_transaction(sb: Sandbox, transaction_id: Id) -> dict:
    """Ask for a refund of a completed payment (money goes back to its card).

    Args:
        transaction_id: the payment.
    """
    t = sb.get("transactions", transaction_id, what="transaction")
    if t["status"] != "completed":
        raise ToolError(
            "invalid_transition", f"transaction {transaction_id} is {t['status']}; only completed ones refund"
        )
    card = sb.get("cards", t["card_id"], what="card")
    sb.update("cards", card["id"], balance=round(card["balance"] + t["amount"], 2))
    return sb.update("transactions", transaction_id, status="refunded")


@tool("wallet", write=True)
def request_payment(sb: Sandbox, payee: Name, amount: Amount, note: str = "") -> dict:
    """Request money from someone (a payment request they can accept).

    Args:
        payee: who should pay you.
        amount: how much.
        note: what it is for.
    """
    require_online(sb, "payment requests")
    return sb.insert(
        "transactions",
        {"payee": payee, "amount": -amount, "currency": "EUR", "card_id": "", "note": note, "status": "requested"},
        prefix="txn",
    )


# ----------------------------------------------------------------------------------------------- shopping


@tool("shopping", write=False)
def search_products(sb: Sandbox, query: Name) -> list[dict]:
    """Search the shop and food-delivery catalogue for products and dishes.

    Args:
        query: words of the product or store name.
    """
    return [p for p in sb.rows("products") if matches(query, p["name"], p["store"])]


@tool("shopping", write=True)
def add_to_cart(sb: Sandbox, product_id: Id, qty: Annotated[int, pydantic.Field(ge=1, le=99)] = 1) -> dict:
    """Put a product in the shopping cart.

    Args:
        product_id: the product.
        qty: how many.
    """
    p = sb.get("products", product_id, what="product")
    in_cart = sum(c["qty"] for c in sb.rows("cart", product_id=product_id))
    if in_cart + qty > p["stock"]:
        raise ToolError(
            "conflict",
            f"only {p['stock']} of {p['name']} in stock ({in_cart} already in the cart)",
            "lower the quantity or pick another product",
        )
    return sb.insert("cart", {"product_id": product_id, "qty": qty}, prefix="crt")


@tool("shopping", write=True)
def remove_from_cart(sb: Sandbox, cart_item_id: Id) -> dict:
    """Take an item out of the shopping cart.

    Args:
        cart_item_id: the cart line.
    """
    return sb.delete("cart", cart_item_id)


@tool("shopping", write=False)
def view_cart(sb: Sandbox) -> dict:
    """The shopping cart's items and total price."""
    lines = [{**c, "product": sb.get("products", c["product_id"])} for c in sb.rows("cart")]
    return {"items": lines, "total": round(sum(x["qty"] * x["product"]["price"] for x in lines), 2)}


@tool("shopping", write=True)
def place_order(sb: Sandbox, address: Name) -> dict:
    """Check out: order everything in the cart for delivery to an address.

    Args:
        address: the delivery address.
    """
    cart = view_cart(sb)
    if not cart["items"]:
        raise ToolError("invalid_transition", "the cart is empty", "add products with add_to_cart first")
    require_online(sb, "ordering")
    for line in cart["items"]:
        sb.update("products", line["product_id"], stock=line["product"]["stock"] - line["qty"])
        sb.delete("cart", line["id"])
    items = sorted(f"{x['qty']}x {x['product']['name']}" for x in cart["items"])
    return sb.insert(
        "orders", {"items": items, "total": cart["total"], "status": "placed", "address": address}, prefix="ord"
    )


@tool("shopping", write=False)
def list_orders(sb: Sandbox) -> list[dict]:
    """Orders with their items and status (placed, shipped, delivered, cancelled)."""
    return sb.rows("orders")


@tool("shopping", write=True)
def cancel_order(sb: Sandbox, order_id: Id) -> dict:
    """Cancel an order that has not shipped yet.

    Args:
        order_id: the order.
    """
    o = sb.get("orders", order_id, what="order")
    if o["status"] != "placed":
        raise ToolError(
            "invalid_transition",
            f"order {order_id} is {o['status']}; only placed orders cancel",
            "a shipped or delivered order can be returned through the shop's support",
        )
    return sb.update("orders", order_id, status="cancelled")


# ----------------------------------------------------------------------------------------------- travel


@tool("travel", write=False)
def search_flights(sb: Sandbox, origin: Name, destination: Name, date: Date) -> list[dict]:
    """Find flights between two cities on a date, cheapest first.

    Args:
        origin: departure city.
        destination: arrival city.
        date: travel day, YYYY-MM-DD.
    """
    found = [
        f
        for f in sb.rows("flights", date=date)
        if matches(origin, f["origin"]) and matches(destination, f["destination"])
    ]
    return sorted(found, key=lambda f: f["price"])


@tool("travel", write=True)
def book_flight(sb: Sandbox, flight_id: Id, passengers: Annotated[int, pydantic.Field(ge=1, le=9)] = 1) -> dict:
    """Book seats on a flight.

    Args:
        flight_id: the flight from search_flights.
        passengers: number of seats.
    """
    f = sb.get("flights", flight_id, what="flight")
    if f["seats"] < passengers:
        raise ToolError("conflict", f"flight {flight_id} has only {f['seats']} seats left", "choose another flight")
    require_online(sb, "booking")
    sb.update("flights", flight_id, seats=f["seats"] - passengers)
    return sb.insert(
        "bookings",
        {
            "kind": "flight",
            "ref": flight_id,
            "date": f["date"],
            "nights": 0,
            "passengers": passengers,
            "status": "confirmed",
        },
        prefix="bkg",
    )


@tool("travel", write=False)
def search_hotels(sb: Sandbox, city: Name) -> list[dict]:
    """Hotels in a city with their nightly price and free rooms.

    Args:
        city: the city.
    """
    return sorted((h for h in sb.rows("hotels") if matches(city, h["city"])), key=lambda h: h["price"])


@tool("travel", write=True)
def book_hotel(sb: Sandbox, hotel_id: Id, date: Date, nights: Annotated[int, pydantic.Field(ge=1, le=30)]) -> dict:
    """Book a hotel room from a check-in date for a number of nights.

    Args:
        hotel_id: the hotel.
        date: check-in day, YYYY-MM-DD.
        nights: how many nights.
    """
    h = sb.get("hotels", hotel_id, what="hotel")
    if h["rooms"] < 1:
        raise ToolError("conflict", f"{h['name']} is fully booked", "choose another hotel")
    require_online(sb, "booking")
    sb.update("hotels", hotel_id, rooms=h["rooms"] - 1)
    return sb.insert(
        "bookings",
        {"kind": "hotel", "ref": hotel_id, "date": date, "nights": nights, "passengers": 1, "status": "confirmed"},
        prefix="bkg",
    )


@tool("travel", write=False)
def list_bookings(sb: Sandbox) -> list[dict]:
    """Flight and hotel bookings with their status."""
    return sb.rows("bookings")


@tool("travel", write=True)
def cancel_booking(sb: Sandbox, booking_id: Id) -> dict:
    """Cancel a flight or hotel booking (not after check-in).

    Args:
        booking_id: the booking.
    """
    b = sb.get("bookings", booking_id, what="booking")
    if b["status"] != "confirmed":
        raise ToolError("invalid_transition", f"booking {booking_id} is {b['status']}; only confirmed ones cancel")
    return sb.update("bookings", booking_id, status="cancelled")


@tool("travel", write=True)
def check_in(sb: Sandbox, booking_id: Id) -> dict:
    """Online check-in for a booked flight.

    Args:
        booking_id: the flight booking.
    """
    b = sb.get("bookings", booking_id, what="booking")
    if b["kind"] != "flight" or b["status"] != "confirmed":
        raise ToolError(
            "invalid_transition",
            f"booking {booking_id} is a {b['status']} {b['kind']} booking; only confirmed flights check in",
        )
    return sb.update("bookings", booking_id, status="checked_in")


# ----------------------------------------------------------------------------------------------- media


@tool("media", write=False)
def search_music(sb: Sandbox, query: Name) -> list[dict]:
    """Find songs (tracks) by title or artist.

    Args:
        query: words of the title or artist.
    """
    return [t for t in sb.rows("tracks") if matches(query, t["title"], t["artist"])]


def _player(sb: Sandbox) -> dict:
    rows = sb.rows("player")
    return (
        rows[0]
        if rows
        else sb.insert(
            "player",
            {"id": "player", "track_id": "", "state": "stopped", "volume": 50, "shuffle": 0},
            generate_id=False,
        )
    )


@tool("media", write=True)
def play_track(sb: Sandbox, track_id: Id) -> dict:
    """Play a song now.

    Args:
        track_id: the track.
    """
    sb.get("tracks", track_id, what="track")
    _player(sb)
    return sb.update("player", "player", track_id=track_id, state="playing")


@tool("media", write=True)
def pause_music(sb: Sandbox) -> dict:
    """Pause the music that is playing."""
    if _player(sb)["state"] != "playing":
        raise ToolError("invalid_transition", "nothing is playing")
    return sb.update("player", "player", state="paused")


@tool("media", write=True)
def like_track(sb: Sandbox, track_id: Id, liked: bool = True) -> dict:
    """Like (heart) a song, or remove the like.

    Args:
        track_id: the track.
        liked: true to like, false to unlike.
    """
    sb.get("tracks", track_id, what="track")
    return sb.update("tracks", track_id, liked=liked)


@tool("media", write=True)
def create_playlist(sb: Sandbox, name: Name, track_ids: list[Id] = []) -> dict:  # noqa: B006
    """Make a new music playlist, optionally with songs.

    Args:
        name: playlist name.
        track_ids: songs to start it with.
    """
    if sb.rows("playlists", name=name):
        raise ToolError("conflict", f"a playlist named {name!r} already exists", "add songs to it instead")
    for t in track_ids:
        sb.get("tracks", t, what="track")
    return sb.insert("playlists", {"name": name, "track_ids": list(dict.fromkeys(track_ids))}, prefix="pl")


@tool("media", write=True)
def add_to_playlist(sb: Sandbox, playlist_id: Id, track_id: Id) -> dict:
    """Add a song to the end of a playlist.

    Args:
        playlist_id: the playlist.
        track_id: the song.
    """
    pl = sb.get("playlists", playlist_id, what="playlist")
    sb.get("tracks", track_id, what="track")
    tracks = ids(pl["track_ids"])
    if track_id in tracks:
        raise ToolError("conflict", f"the song is already in {pl['name']!r}")
    return sb.update("playlists", playlist_id, track_ids=[*tracks, track_id])


@tool("media", write=True)
def remove_from_playlist(sb: Sandbox, playlist_id: Id, track_id: Id) -> dict:
    """Take a song out of a playlist.

    Args:
        playlist_id: the playlist.
        track_id: the song.
    """
    pl = sb.get("playlists", playlist_id, what="playlist")
    tracks = ids(pl["track_ids"])
    if track_id not in tracks:
        raise ToolError("not_found", f"the song is not in {pl['name']!r}")
    return sb.update("playlists", playlist_id, track_ids=[t for t in tracks if t != track_id])


@tool("media", write=False)
def list_playlists(sb: Sandbox) -> list[dict]:
    """Music playlists with their songs."""
    return sb.rows("playlists")


@tool("media", write=True)
def set_shuffle(sb: Sandbox, enabled: bool) -> dict:
    """Turn shuffle play on or off in the music player.

    Args:
        enabled: true = shuffle.
    """
    _player(sb)
    return sb.update("player", "player", shuffle=enabled)
