local blob = require "codec.blob"

-- An NSKeyedArchiver archive of {cuisine = "thai", servings = 4, tags = {"spicy", "quick"}}, made by
-- Foundation's NSKeyedArchiver.
local archive = hex.decode(
  "62706c6973743030d401020304050809345424746f705924617263686976657258246f626a6563747358247665727369"
  .. "6f6ed1060754726f6f7480015f100f4e534b657965644172636869766572ac0a0b18191a1b1c2324252c2d55246e756c"
  .. "6cd30c0d0e0f13145a4e532e6f626a656374735624636c617373574e532e6b657973a310111280058006800a800ba315"
  .. "16178002800380045763756973696e6554746167735873657276696e67735474686169d21d1e1f225a4e532e6f626a65"
  .. "6374735624636c617373a2202180078008800955737069637955717569636bd22627282b5824636c61737365735a2463"
  .. "6c6173736e616d65a2292a574e534172726179584e534f626a656374574e5341727261791004d22e2f30315a24636c61"
  .. "73736e616d655824636c61737365735c4e5344696374696f6e617279a232335c4e5344696374696f6e617279584e534f"
  .. "626a65637412000186a00008001100160020002900320035003a003c004e005b006100680073007a008200860088008a"
  .. "008c008e009200940096009800a000a500ae00b300b800c300ca00cd00cf00d100d300d900df00e400ed00f800fb0103"
  .. "010c01140116011b0126012f013c013f014c015500000000000002010000000000000035000000000000000000000000"
  .. "0000015a"
)

test("a keyed archive becomes JSON", function()
  expect(json.decode(blob.archive_to_json(archive)))
    :equals({ cuisine = "thai", servings = 4, tags = { "spicy", "quick" } })
end)

test("JSON becomes a keyed archive and back", function()
  local text = '{"cuisine":"thai","servings":4,"tags":["spicy","quick"]}'
  local bytes = blob.json_to_archive(text)
  expect(bytes):matches("^bplist00")
  expect(plist.unarchive(bytes)):equals(plist.unarchive(archive))
  expect(json.decode(blob.archive_to_json(bytes))):equals(json.decode(text))
  expect(blob.json_to_archive(NULL)):is_null()
end)

test("archive_to_json keeps NULL", function()
  expect(blob.archive_to_json(NULL)):is_null()
end)

test("archive_to_json rejects bytes that are not an archive", function()
  expect_error(function() blob.archive_to_json("not a plist") end)
end)

test("JSON becomes a binary property list and back", function()
  local bytes = blob.json_to_plist('{"a":1,"b":[true,"x"]}')
  expect(bytes:sub(1, 8)):equals("bplist00")
  expect(json.decode(blob.plist_to_json(bytes))):equals({ a = 1, b = { true, "x" } })
end)

test("json_to_plist keeps NULL", function()
  expect(blob.json_to_plist(NULL)):is_null()
end)

test("plist_to_json reads XML property lists", function()
  local xml = plist.encode({ name = "soup" }, "xml")
  expect(json.decode(blob.plist_to_json(xml))):equals({ name = "soup" })
end)

test("hex to base64 and back", function()
  expect(blob.hex_to_base64("00ff10")):equals("AP8Q")
  expect(blob.base64_to_hex("AP8Q")):equals("00ff10")
end)

test("hex and base64 keep NULL", function()
  expect(blob.hex_to_base64(NULL)):is_null()
  expect(blob.base64_to_hex(NULL)):is_null()
end)

test("prefix adds a header once", function()
  expect(blob.prefix("\0\1", "PHO1")):equals("PHO1\0\1")
  expect(blob.prefix("PHO1\0\1", "PHO1")):equals("PHO1\0\1")
  expect(blob.prefix(NULL, "PHO1")):is_null()
end)
