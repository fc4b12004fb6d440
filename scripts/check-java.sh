#!/bin/sh
# Checks that a Java 17+ runtime is available, as PySpark needs. Prints what
# is missing and how to get it; exits non-zero when the check fails.
if [ -n "$JAVA_HOME" ] && [ -x "$JAVA_HOME/bin/java" ]; then
  java="$JAVA_HOME/bin/java"
elif command -v java >/dev/null 2>&1; then
  java=java
else
  echo "error: no Java runtime found. subsum's Spark pipeline (PySpark, local[*]) needs Java 17 or newer." >&2
  echo "       Install one (Debian/Ubuntu: 'apt-get install openjdk-17-jre-headless') or set JAVA_HOME." >&2
  exit 1
fi
ver=$("$java" -version 2>&1 | sed -n 's/.*version "\([0-9][0-9]*\)[^"]*".*/\1/p' | head -n 1)
if [ -z "$ver" ]; then
  echo "error: could not read the Java version from '$java -version'." >&2
  exit 1
fi
if [ "$ver" = "1" ] || [ "$ver" -lt 17 ]; then
  echo "error: Java $ver found at $(command -v "$java"), but PySpark needs Java 17 or newer." >&2
  echo "       Install a newer JDK/JRE or point JAVA_HOME at one." >&2
  exit 1
fi
exit 0
