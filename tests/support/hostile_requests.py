"""Arbitrary requests, as a hostile or broken client sends them: for the templates' property
tests. Cookie headers (and an app's Beekeeper-Token header) mix well-formed tokens, text,
near-misses of our cookie's name and separators; queries mix `token` in several cases with the
same values, and /client's `redeem` with its one good value, near-misses and the same hostile
values."""

from __future__ import annotations

from hypothesis import strategies as st

from beekeeper.core.datamodel import (
    CLIENT_REDEEM_PARAMETER,
    CLIENT_REDEEM_VALUE,
    CLIENT_TOKEN_PARAMETER,
    COOKIE_NAME,
    TOKEN_HEADER,
)

VALID_TOKENS = st.builds(
    lambda token_id, ordinal: f"{token_id}.{ordinal}",
    st.text("ABCxyz019_-", min_size=22, max_size=22),
    st.integers(0, 999_999_999_999),
)
COOKIE_VALUES = st.one_of(VALID_TOKENS, st.text(), VALID_TOKENS.map(lambda t: t + "\\\"'"))
COOKIE_NAMES = st.sampled_from([COOKIE_NAME, "a", "xbeekeeper_token", "BEEKEEPER_TOKEN", ""])
COOKIE_HEADERS = st.one_of(
    st.text(),
    st.lists(st.tuples(COOKIE_NAMES, COOKIE_VALUES, st.sampled_from([";", "; ", " ; ", ";;"]))).map(
        lambda parts: "".join(f"{n}={v}{sep}" for n, v, sep in parts)
    ),
)
HEADER_NAMES = st.one_of(
    st.sampled_from(
        ["Cookie", "cookie", "COOKIE", "X-Other", "token", TOKEN_HEADER, TOKEN_HEADER.lower()]
    ),
    st.text(max_size=12),
)
HEADERS = st.dictionaries(HEADER_NAMES, COOKIE_HEADERS, max_size=3)
REDEEM_VALUES = st.one_of(
    st.sampled_from([CLIENT_REDEEM_VALUE, "", "0", "true", " 1", "1 ", "01", "11", "1\n"]),
    COOKIE_VALUES,
)
QUERIES = st.one_of(
    st.dictionaries(
        st.sampled_from(["token", "Token", "x", "REDEEM", "reDeem"]), COOKIE_VALUES, max_size=2
    ),
    st.fixed_dictionaries(
        {CLIENT_REDEEM_PARAMETER: REDEEM_VALUES},
        optional={"token": st.one_of(VALID_TOKENS, COOKIE_VALUES), "Redeem": REDEEM_VALUES},
    ),
)


def redeem_state(query: dict[str, str]) -> str:
    """What /client makes of a query (vtl/_read-redeem.vtl), modelled independently: "redeem"
    for exactly the good value with `token` in the query, "without_token" for the good value
    without it (the cookie never redeems), "malformed" for any other value or for a parameter
    named `redeem` in another case (query names are case-sensitive), "none" for a plain
    check."""
    misnamed = any(
        name != CLIENT_REDEEM_PARAMETER and name.lower() == CLIENT_REDEEM_PARAMETER
        for name in query
    )
    value = query.get(CLIENT_REDEEM_PARAMETER)
    if misnamed or (value is not None and value != CLIENT_REDEEM_VALUE):
        return "malformed"
    if value is None:
        return "none"
    return "redeem" if CLIENT_TOKEN_PARAMETER in query else "without_token"
