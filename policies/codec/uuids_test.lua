local uuids = require "codec.uuids"

test("a UUID string becomes 16 bytes", function()
  local bytes = uuids.to_bytes("E7350B5D-0D1B-4A4C-9C4E-5E2A8D8B8E01")
  expect(#bytes):equals(16)
  expect(bytes:byte(1)):equals(0xE7)
end)

test("lower case, braces and no dashes are accepted", function()
  local canonical = uuids.to_bytes("E7350B5D-0D1B-4A4C-9C4E-5E2A8D8B8E01")
  expect(uuids.to_bytes("{e7350b5d-0d1b-4a4c-9c4e-5e2a8d8b8e01}")):equals(canonical)
  expect(uuids.to_bytes("e7350b5d0d1b4a4c9c4e5e2a8d8b8e01")):equals(canonical)
end)

test("16 bytes become the upper-case string", function()
  expect(uuids.to_string(uuids.to_bytes("e7350b5d-0d1b-4a4c-9c4e-5e2a8d8b8e01")))
    :equals("E7350B5D-0D1B-4A4C-9C4E-5E2A8D8B8E01")
end)

test("NULL passes through both ways", function()
  expect(uuids.to_bytes(NULL)):is_null()
  expect(uuids.to_string(NULL)):is_null()
end)

test("malformed strings are errors naming the value", function()
  expect_error(function() uuids.to_bytes("not-a-uuid") end, "not a UUID: not%-a%-uuid")
  expect_error(function() uuids.to_bytes("E7350B5D-0D1B-4A4C-9C4E-5E2A8D8B8E0") end, "not a UUID")
end)

test("to_string wants exactly 16 bytes", function()
  expect_error(function() uuids.to_string("short") end, "16 bytes")
end)

test("is_valid", function()
  expect(uuids.is_valid("E7350B5D-0D1B-4A4C-9C4E-5E2A8D8B8E01")):is_true()
  expect(uuids.is_valid("E7350B5D")):is_false()
  expect(uuids.is_valid(42)):is_false()
end)
