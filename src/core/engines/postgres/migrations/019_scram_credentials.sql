-- SCRAM credentials (issue 19): per user and mechanism the salt, iteration
-- count and the keys derived from the salted password; never the password.
CREATE TABLE IF NOT EXISTS scram_credentials (
  user_name text NOT NULL,
  mechanism text NOT NULL,
  iterations integer NOT NULL,
  salt bytea NOT NULL,
  stored_key bytea NOT NULL,
  server_key bytea NOT NULL,
  PRIMARY KEY (user_name, mechanism)
);
