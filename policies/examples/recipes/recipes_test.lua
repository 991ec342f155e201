-- The example's mapping files run on objects given here (migrate{} runs a step in memory).
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

test("2→3: the archived info becomes JSON and the cuisine an attribute", function()
  local out = migrate {
    mapping = "examples/recipes/policies/Recipes 2-Recipes 3.lua",
    source = { Recipe = { { title = "Pad thai", info = archive } } },
  }
  local recipe = out.Recipe[1]
  expect(json.decode(recipe.info)):equals({ cuisine = "thai", servings = 4, tags = { "spicy", "quick" } })
  expect(recipe.cuisine):equals("thai")
  expect(recipe.title):equals("Pad thai")
end)

test("2→3: a recipe without info keeps NULL", function()
  local out = migrate {
    mapping = "examples/recipes/policies/Recipes 2-Recipes 3.lua",
    source = { Recipe = { { title = "Toast" } } },
  }
  expect(out.Recipe[1].info):is_null()
  expect(out.Recipe[1].cuisine):is_null()
end)

test("3→4: authors are split out, one per e-mail address", function()
  local out = migrate {
    mapping = "examples/recipes/policies/Recipes 3-Recipes 4.lua",
    source = { Recipe = {
      { title = "Soup", authorName = "Ada King Lovelace", authorEmail = "ada@example.org" },
      { title = "Stew", authorName = "Ada Lovelace", authorEmail = "ada@example.org" },
      { title = "Pie", authorName = "Grace Hopper", authorEmail = "grace@example.org" },
      { title = "Bread", authorName = NULL, authorEmail = NULL },
    } },
  }
  expect(#out.Author):equals(2)
  expect(out.Author[1]):equals({
    _id = "Author/p1", email = "ada@example.org", name = "Ada King Lovelace", firstName = "Ada",
    lastName = "Lovelace", recipes = { "Recipe/p1", "Recipe/p2" },
  })
  expect(out.Recipe[3].author):equals("Author/p2")
  expect(out.Recipe[4].author):equals(nil)
end)

test("3→4: quantities become metric", function()
  local out = migrate {
    mapping = "examples/recipes/policies/Recipes 3-Recipes 4.lua",
    source = {
      Recipe = { { _id = "soup", title = "Soup" } },
      Ingredient = {
        { name = "flour", quantity = 2.0, unit = "cup", recipe = "soup" },
        { name = "butter", quantity = 4.0, unit = "oz", recipe = "soup" },
        { name = "salt", quantity = 5.0, unit = "g", recipe = "soup" },
        { name = "water", quantity = NULL, unit = NULL, recipe = "soup" },
      },
    },
  }
  expect(out.Ingredient[1].quantity):equals(473.2)
  expect(out.Ingredient[1].unit):equals("ml")
  expect(out.Ingredient[2].quantity):equals(113.4)
  expect(out.Ingredient[2].unit):equals("g")
  expect(out.Ingredient[3])
    :equals({ _id = "Ingredient/p3", name = "salt", quantity = 5.0, unit = "g", recipe = "Recipe/p1" })
  expect(out.Ingredient[4].quantity):is_null()
  expect(out.Recipe[1].ingredients):has_length(4)
end)

test("a mapping run on an unknown source entity is refused", function()
  expect_error(function()
    migrate { mapping = "examples/recipes/policies/Recipes 3-Recipes 4.lua", source = { Cake = { {} } } }
  end, "no entity 'Cake'")
end)
