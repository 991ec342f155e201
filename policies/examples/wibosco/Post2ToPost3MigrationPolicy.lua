-- The Lua policy for CoreDataMigration_Example.Post2ToPost3MigrationPolicy, the custom
-- NSEntityMigrationPolicy that wibosco's CoreDataMigration-Example names for the PostToPost mapping
-- of its Migration2to3.xcmappingmodel. Version 3 moves a post's hexColor string into a Color
-- object of its own: for each post, a new Color with a new colorID and the post's hexColor as hex,
-- set as the post's color. Post.color ↔ Color.post is one-to-one, so the color names its post too.
-- The Swift class did it in createDestinationInstances, after super; here it is stage 2, where
-- relationships are set.
--
--   migrun migrate CoreDataMigration_Example_2.sqlite --model CoreDataMigration_Example.xcdatamodeld \
--     --to "CoreDataMigration_Example 3" --policies <the app's Mappings folder> --policies <this folder>
return {
  createRelationships = function(dst, m)
    local src = m:sources(m.mapping.name, dst)[1]
    dst.color = m:insert("Color", { colorID = uuid.new(), hex = src.hexColor })
  end,
}
