-- The policy function both benchmarks call: one row in, a new row out (the title upper-cased at
-- its first letter, the photo given a 4-byte header), like a migration's per-object transform.
return function(r)
  local name, photo = r.name, r.photo
  return {
    name = name:sub(1, 1):upper() .. name:sub(2),
    cookMinutes = r.cookMinutes,
    rating = r.rating,
    created = r.created,
    photo = "PHO1" .. photo,
    author = r.author,
    notes = r.notes,
    vegan = r.vegan,
  }
end
