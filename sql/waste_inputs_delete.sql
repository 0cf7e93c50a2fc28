-- Forgets the digest of the previous `waste` build (its replacement follows in the same transaction).
delete from waste_inputs
