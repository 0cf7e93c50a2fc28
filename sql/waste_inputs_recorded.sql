-- The inputs digest the `waste` table was last built from, if any.
select inputs_digest from waste_inputs
