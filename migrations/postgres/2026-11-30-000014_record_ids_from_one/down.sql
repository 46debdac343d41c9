-- Nothing to undo: a type without a row starts at 1, as it should.
SELECT 1;
