DROP TABLE auth_epoch;
